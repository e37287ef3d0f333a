package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gatehouse-dev/gatehouse/internal/apiclient"
)

// clientFlags are the flags of every command that calls a server as a person: where
// the server is and which API token to send.
type clientFlags struct {
	url, token, tokenEnv string
}

// addClientFlags registers --url (default GATEHOUSE_URL, else defURL), --token and
// --token-env on fs.
func addClientFlags(fs *pflag.FlagSet, getenv func(string) string, defURL string) *clientFlags {
	f := &clientFlags{}
	fs.StringVar(&f.url, "url", firstSet(getenv, defURL, "GATEHOUSE_URL"), "the Gatehouse server's base URL (env GATEHOUSE_URL)")
	// The token's default is not shown in the help: it is read after parsing.
	fs.StringVar(&f.token, "token", "", "an API token from /settings/tokens, sent as a bearer credential (env GATEHOUSE_TOKEN; prefer the variable: flags show in ps)")
	fs.StringVar(&f.tokenEnv, "token-env", "", "read the API token from this environment variable instead")
	return f
}

// bearer is the token to send: the variable --token-env names, else --token, else
// GATEHOUSE_TOKEN. A --token-env naming an empty variable is said on stderr (the
// server will answer as to no token).
func (f *clientFlags) bearer(cmd string, getenv func(string) string, stderr io.Writer) string {
	if f.tokenEnv != "" {
		t := strings.TrimSpace(getenv(f.tokenEnv))
		if t == "" {
			fmt.Fprintf(stderr, "%s: --token-env %s: the variable is empty or unset; sending no token\n", cmd, f.tokenEnv)
		}
		return t
	}
	if t := strings.TrimSpace(f.token); t != "" {
		return t
	}
	return strings.TrimSpace(getenv("GATEHOUSE_TOKEN"))
}

// client is the API client these flags describe.
func (f *clientFlags) client(cmd string, getenv func(string) string, stderr io.Writer) *apiclient.Client {
	return &apiclient.Client{Base: strings.TrimRight(strings.TrimSpace(f.url), "/"), Token: f.bearer(cmd, getenv, stderr)}
}
