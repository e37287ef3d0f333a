//go:build !linux

package held

import "net"

// watchHangUp calls hungUp once conn's client hangs up, until stop is called; off
// Linux a goroutine of its own reads the connection for it.
func watchHangUp(conn net.Conn, hungUp func()) (stop func()) {
	return watchByReading(conn, hungUp)
}
