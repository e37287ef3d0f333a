// Package pushtest is a real Web Push service on loopback for tests: it hands out
// subscriptions made the way a browser makes them (a P-256 key pair and a 16-byte auth
// secret), checks each push's VAPID authorization (RFC 8292) and headers, decrypts the
// aes128gcm payload (RFC 8291 over RFC 8188) with the subscription's private key, and
// delivers what it received to the test. It can be told to fail or hang, so retries
// and permanent failures are testable against real HTTP.
package pushtest

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/notify"
)

// Received is one push the service accepted.
type Received struct {
	// Endpoint is the subscription's endpoint the push was sent to.
	Endpoint string
	// Raw is the decrypted payload; JSON is it decoded (nil if it is not JSON).
	Raw  []byte
	JSON map[string]any
	// Topic, Urgency and TTL are the push headers (RFC 8030 §5).
	Topic, Urgency string
	TTL            int
	// Subject is the VAPID token's "sub" claim.
	Subject string
}

// Decode unmarshals the payload into v.
func (r Received) Decode(v any) error { return json.Unmarshal(r.Raw, v) }

// Service is the test push service. Its methods are safe for concurrent use.
type Service struct {
	t   testing.TB
	srv *httptest.Server
	// done ends hung requests when the test ends, so the server can close.
	done chan struct{}

	mu       sync.Mutex
	subs     map[string]*subscriber
	vapidKey string
	faults   []int // queued answers for the next requests: a status, or hang
	received chan Received
	rejected chan string
	requests int
}

// hang is the fault that holds a request until the client gives up.
const hang = -1

type subscriber struct {
	key  *ecdh.PrivateKey
	auth []byte
	gone bool
}

// NewService starts the push service on loopback; it stops when the test ends.
func NewService(t testing.TB) *Service {
	t.Helper()
	s := &Service{t: t, done: make(chan struct{}), subs: map[string]*subscriber{},
		received: make(chan Received, 256), rejected: make(chan string, 256)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	t.Cleanup(func() { close(s.done) }) // runs first: releases hung requests
	return s
}

// URL is the service's base URL.
func (s *Service) URL() string { return s.srv.URL }

// ExpectVAPIDKey makes the service refuse pushes signed with any other application
// server key than pub (base64url), as a real push service refuses pushes to a
// subscription made for another key.
func (s *Service) ExpectVAPIDKey(pub string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vapidKey = pub
}

// NewSubscription subscribes a new "browser": a fresh P-256 key pair and 16-byte auth
// secret, with an endpoint on this service.
func (s *Service) NewSubscription() notify.PushSubscription {
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		s.t.Fatalf("pushtest: generate key: %v", err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	var id [12]byte
	_, _ = rand.Read(id[:])
	name := hex.EncodeToString(id[:])
	s.mu.Lock()
	s.subs[name] = &subscriber{key: key, auth: auth}
	s.mu.Unlock()
	return notify.PushSubscription{
		Endpoint: s.srv.URL + "/push/" + name,
		P256dh:   base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()),
		Auth:     base64.RawURLEncoding.EncodeToString(auth),
	}
}

// Unsubscribe makes the service answer 410 Gone for sub from now on, as a push
// service does once the browser unsubscribed.
func (s *Service) Unsubscribe(sub notify.PushSubscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := s.subs[path(sub.Endpoint)]; x != nil {
		x.gone = true
	}
}

// FailNext answers the next n pushes with status (500, 410, 429…) without taking them.
func (s *Service) FailNext(n, status int) { s.queue(n, status) }

// HangNext holds the next n pushes open until the sender gives up (its timeout or
// context), to test that a hung push service cannot stall delivery.
func (s *Service) HangNext(n int) { s.queue(n, hang) }

func (s *Service) queue(n, fault int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults = append(s.faults, fault)
	}
}

// Requests is how many pushes arrived, whatever they were answered.
func (s *Service) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Next waits up to timeout for the next accepted push, failing the test without one.
func (s *Service) Next(t testing.TB, timeout time.Duration) Received {
	t.Helper()
	select {
	case r := <-s.received:
		return r
	case <-time.After(timeout):
		t.Fatalf("pushtest: no push arrived within %v (%d requests seen)", timeout, s.Requests())
		return Received{}
	}
}

// NextRejection waits up to timeout for the reason the service refused a push.
func (s *Service) NextRejection(t testing.TB, timeout time.Duration) string {
	t.Helper()
	select {
	case r := <-s.rejected:
		return r
	case <-time.After(timeout):
		t.Fatalf("pushtest: no push was refused within %v", timeout)
		return ""
	}
}

// None reports that no push was accepted (without waiting).
func (s *Service) None() bool { return len(s.received) == 0 }

func path(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/push/")
}

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	var fault int
	if len(s.faults) > 0 {
		fault, s.faults = s.faults[0], s.faults[1:]
	}
	sub := s.subs[strings.TrimPrefix(r.URL.Path, "/push/")]
	want := s.vapidKey
	s.mu.Unlock()
	switch {
	case fault == hang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	case fault != 0:
		http.Error(w, "pushtest: told to fail", fault)
		return
	case r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/push/") || sub == nil:
		http.NotFound(w, r)
		return
	case sub.gone:
		http.Error(w, "pushtest: unsubscribed", http.StatusGone)
		return
	}
	got, status, err := s.check(r, sub, want)
	if err != nil {
		s.rejected <- err.Error()
		http.Error(w, err.Error(), status)
		return
	}
	s.received <- got
	w.WriteHeader(http.StatusCreated)
}

// check verifies one push and decrypts it; the status is the push service's answer
// when it fails.
func (s *Service) check(r *http.Request, sub *subscriber, wantKey string) (Received, int, error) {
	subject, err := s.checkVAPID(r.Header.Get("Authorization"), wantKey)
	if err != nil {
		return Received{}, http.StatusUnauthorized, err
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "aes128gcm" {
		return Received{}, http.StatusUnsupportedMediaType, fmt.Errorf("Content-Encoding %q, want aes128gcm", ce)
	}
	ttl, err := strconv.Atoi(r.Header.Get("TTL"))
	if err != nil || ttl < 0 {
		return Received{}, http.StatusBadRequest, fmt.Errorf("TTL header %q is not a number of seconds", r.Header.Get("TTL"))
	}
	if topic := r.Header.Get("Topic"); len(topic) > 32 || strings.Trim(topic, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		return Received{}, http.StatusBadRequest, fmt.Errorf("topic header %q: want at most 32 base64url characters", topic)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8192))
	if err != nil {
		return Received{}, http.StatusBadRequest, err
	}
	if len(body) > 4096+86 {
		return Received{}, http.StatusRequestEntityTooLarge, fmt.Errorf("payload of %d bytes is over 4 KiB", len(body))
	}
	plain, err := Decrypt(body, sub.key, sub.auth)
	if err != nil {
		return Received{}, http.StatusBadRequest, err
	}
	got := Received{Endpoint: s.srv.URL + r.URL.Path, Raw: plain, Topic: r.Header.Get("Topic"),
		Urgency: r.Header.Get("Urgency"), TTL: ttl, Subject: subject}
	_ = json.Unmarshal(plain, &got.JSON)
	return got, 0, nil
}

// checkVAPID verifies "vapid t=<JWT>, k=<public key>" (RFC 8292): an ES256 token
// signed by k, for this service's origin, expiring within 24 hours, naming a contact.
func (s *Service) checkVAPID(header, wantKey string) (string, error) {
	params, ok := strings.CutPrefix(header, "vapid ")
	if !ok {
		return "", fmt.Errorf("authorization header %q is not a vapid one", truncate(header))
	}
	var token, key string
	for part := range strings.SplitSeq(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			token = v
		case "k":
			key = v
		}
	}
	if wantKey != "" && key != wantKey {
		return "", errors.New("vapid k is not the application server key the subscription was made for")
	}
	rawKey, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil {
		return "", fmt.Errorf("vapid k does not decode: %v", err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), rawKey)
	if err != nil {
		return "", fmt.Errorf("vapid k is not a P-256 point: %v", err)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", errors.New("vapid t is not a JWT")
	}
	var head struct{ Alg string }
	if err := decodeSegment(parts[0], &head); err != nil || head.Alg != "ES256" {
		return "", fmt.Errorf("JWT header: want alg ES256 (%v)", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return "", errors.New("JWT signature: want 64 bytes r||s")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return "", errors.New("JWT signature does not verify with vapid k")
	}
	var claims struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return "", fmt.Errorf("JWT claims: %v", err)
	}
	if claims.Aud != s.srv.URL {
		return "", fmt.Errorf("JWT aud %q, want %q", claims.Aud, s.srv.URL)
	}
	now := time.Now()
	if exp := time.Unix(claims.Exp, 0); !exp.After(now) || exp.After(now.Add(24*time.Hour)) {
		return "", fmt.Errorf("JWT exp %v: want in the future and within 24 hours", exp)
	}
	if claims.Sub == "" {
		return "", errors.New("JWT has no sub (the operator's contact)")
	}
	return claims.Sub, nil
}

func decodeSegment(seg string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// Decrypt opens an aes128gcm Web Push message (RFC 8291 §3.4, RFC 8188 §2) with the
// subscription's private key and auth secret.
func Decrypt(body []byte, key *ecdh.PrivateKey, auth []byte) ([]byte, error) {
	// Header: salt (16) | record size (4) | key id length (1) | key id (the sender's
	// ephemeral public key, 65 bytes).
	if len(body) < 21 {
		return nil, errors.New("aes128gcm: shorter than its header")
	}
	salt, rs, idLen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if len(body) < 21+idLen || rs < 18 {
		return nil, errors.New("aes128gcm: bad header")
	}
	senderRaw, records := body[21:21+idLen], body[21+idLen:]
	sender, err := ecdh.P256().NewPublicKey(senderRaw)
	if err != nil {
		return nil, fmt.Errorf("aes128gcm key id is not a P-256 point: %v", err)
	}
	shared, err := key.ECDH(sender)
	if err != nil {
		return nil, err
	}
	// RFC 8291 §3.3: IKM = HKDF(auth, ecdh_secret, "WebPush: info" 0x00 ua_public as_public, 32).
	prkKey, err := hkdf.Extract(sha256.New, shared, auth)
	if err != nil {
		return nil, err
	}
	info := "WebPush: info\x00" + string(key.PublicKey().Bytes()) + string(senderRaw)
	ikm, err := hkdf.Expand(sha256.New, prkKey, info, 32)
	if err != nil {
		return nil, err
	}
	// RFC 8188 §2.2, 2.3: the content key and nonce from the salt.
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	baseNonce, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	var out []byte
	for seq := uint64(0); len(records) > 0; seq++ {
		n := min(int(rs), len(records))
		rec := records[:n]
		records = records[n:]
		nonce := make([]byte, 12)
		copy(nonce, baseNonce)
		var ctr [8]byte
		binary.BigEndian.PutUint64(ctr[:], seq)
		for i := range 8 {
			nonce[4+i] ^= ctr[i]
		}
		plain, err := gcm.Open(nil, nonce, rec, nil)
		if err != nil {
			return nil, fmt.Errorf("aes128gcm record %d does not decrypt: %v", seq, err)
		}
		// Padding: the content, then a delimiter (2 in the last record, 1 before),
		// then zeros.
		end := len(plain) - 1
		for end >= 0 && plain[end] == 0 {
			end--
		}
		last := len(records) == 0
		if end < 0 || (last && plain[end] != 2) || (!last && plain[end] != 1) {
			return nil, fmt.Errorf("aes128gcm record %d: bad padding delimiter", seq)
		}
		out = append(out, plain[:end]...)
	}
	return out, nil
}

func truncate(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
