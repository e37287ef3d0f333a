package views

import "net/url"

// signInURL is the sign-in route returning to next (a local path) afterwards.
func signInURL(next string) string {
	if next == "" {
		return "/auth/signin"
	}
	return "/auth/signin?next=" + url.QueryEscape(next)
}
