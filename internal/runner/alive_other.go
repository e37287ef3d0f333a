//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package runner

import "net"

// alive cannot look at an idle connection here without reading from it: it is taken
// as open (a call on one the runner closed fails as "could not be reached").
func alive(net.Conn) bool { return true }
