// Package static holds the browser assets Gatehouse serves: the vendored, version-pinned
// htmx and its SSE extension, and our own stylesheet and script. They are embedded in
// the binary, so a deployment is one file and the assets always match the templates.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
)

// FS is the embedded asset tree, served under /static/.
//
//go:embed app.css app.js vendor/htmx-2.0.11.min.js vendor/htmx-ext-sse-2.2.4.min.js
//go:embed sw.js manifest.webmanifest notify-device.js icons/*.png
var FS embed.FS

// Asset file names, relative to FS.
const (
	CSS  = "app.css"
	JS   = "app.js"
	HTMX = "vendor/htmx-2.0.11.min.js"
	SSE  = "vendor/htmx-ext-sse-2.2.4.min.js"
	// ServiceWorker and Manifest are served from the root (/sw.js,
	// /manifest.webmanifest), not under /static/: see handlers/pwa.go.
	ServiceWorker = "sw.js"
	Manifest      = "manifest.webmanifest"
	// NotifyDevice is the script of the "Notify this device" button.
	NotifyDevice = "notify-device.js"
)

// URL returns the public path of an asset with a content fingerprint as its query, so
// the long cache lifetime the server sets never serves a stale copy of a file whose
// name carries no version (our own CSS and JS).
func URL(name string) string {
	b, err := FS.ReadFile(name)
	if err != nil {
		return "/static/" + name
	}
	sum := sha256.Sum256(b)
	return "/static/" + name + "?v=" + hex.EncodeToString(sum[:6])
}
