// Package uitest holds Gatehouse's browser tests: a real server on loopback, driven by
// headless Chromium through chromedp, checking what a person sees and clicks — the
// approval page of every prompt kind, the inbox with its keyboard shortcuts, live
// updates, and that hostile agent text never runs. The tests save screenshots of each
// page (desktop and phone widths) to $GATEHOUSE_ARTIFACTS or ./artifacts.
//
// Chromium comes from Debian (apt-get install -y chromium). Without it the tests skip,
// unless GATEHOUSE_REQUIRE_CHROMIUM=1 (CI), where its absence fails them.
package uitest
