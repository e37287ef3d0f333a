package audit

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"
)

// A checkpoint is the chain's head (seq, hash) at a moment, signed, and kept outside
// the database: in the log, in a file (--audit-checkpoint-file) and by whoever reads
// GET /v1/audit/checkpoint. The chain alone has no secret — someone who can write the
// database can delete its last rows and rewind the head, or rewrite it from any row
// on, and it verifies again. A checkpoint taken before that names a row the chain no
// longer has (or no longer has with that hash), and `gatehouse audit verify
// --checkpoint FILE` says so.
//
// Checkpoints are signed with Ed25519, so a verifier needs only the public key: an
// auditor can check them without holding anything that can sign (or mint browser
// cookies). The private key's seed is HMAC-SHA256(server secret, "gatehouse audit
// checkpoints v1") — derived for this one use, like the action links' key, and never
// stored. When no --session-secret is configured the server secret is the one kept in
// the database, and then so is, in effect, the key: the server says so at start.

// CheckpointTag starts every signed checkpoint message.
const CheckpointTag = "gatehouse-audit-checkpoint-v1"

// DayLayout is a checkpoint's day (UTC).
const DayLayout = "2006-01-02"

// Checkpoint is one signed head. Its JSON form is one line of a checkpoint file.
type Checkpoint struct {
	// Day is the UTC day it was taken for (one per day).
	Day  string `json:"day"`
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
	// Time is when it was taken, as TimeLayout.
	Time string `json:"time"`
	// Key is the signer's Ed25519 public key, hex (which key signed; a verifier checks
	// against the key it trusts, not this one).
	Key string `json:"key"`
	// Sig is the Ed25519 signature of Message, hex.
	Sig string `json:"sig"`
}

// Message is what is signed: the tag, day, seq, hash and time, one per line.
func (c *Checkpoint) Message() []byte {
	return []byte(CheckpointTag + "\n" + c.Day + "\n" + strconv.FormatInt(c.Seq, 10) + "\n" + c.Hash + "\n" + c.Time)
}

// Signer signs checkpoints with the key derived from the server's secret.
type Signer struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
}

// NewSigner derives the checkpoint key from the server's secret (see above).
func NewSigner(secret []byte) *Signer {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("gatehouse audit checkpoints v1"))
	priv := ed25519.NewKeyFromSeed(m.Sum(nil))
	return &Signer{priv: priv, pub: priv.Public().(ed25519.PublicKey)}
}

// PublicKey is the key verifiers check checkpoints with, hex.
func (s *Signer) PublicKey() string { return hex.EncodeToString(s.pub) }

// Sign fills c's Key and Sig.
func (s *Signer) Sign(c *Checkpoint) {
	c.Key = s.PublicKey()
	c.Sig = hex.EncodeToString(ed25519.Sign(s.priv, c.Message()))
}

// ParsePublicKey reads a hex Ed25519 public key.
func ParsePublicKey(v string) (ed25519.PublicKey, error) {
	b, err := hex.DecodeString(v)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, errors.New("a checkpoint key is 64 hex digits (the key the server logs at start)")
	}
	return ed25519.PublicKey(b), nil
}

// Check verifies c's signature with pub, the key the verifier trusts.
func (c *Checkpoint) Check(pub ed25519.PublicKey) error {
	sig, err := hex.DecodeString(c.Sig)
	if err != nil || !ed25519.Verify(pub, c.Message(), sig) {
		return errors.New("the signature does not verify with the trusted key")
	}
	if !isHash(c.Hash) || c.Seq < 0 {
		return errors.New("signed, but not a chain head")
	}
	return nil
}

// ReadCheckpoints reads a checkpoint file: one JSON checkpoint per line (blank lines
// skipped). A line that is not one is an error naming it.
func ReadCheckpoints(r io.Reader) ([]Checkpoint, error) {
	var out []Checkpoint
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var c Checkpoint
		if err := json.Unmarshal(line, &c); err != nil || c.Day == "" || c.Sig == "" {
			return nil, fmt.Errorf("line %d is not a checkpoint", n)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// CheckpointStore is what the Checkpointer reads and writes.
type CheckpointStore interface {
	AuditHead(ctx context.Context) (int64, string, error)
	// InsertAuditCheckpoint stores c unless c.Day has one already, and reports whether
	// it did: of all replicas, exactly one stores each day's.
	InsertAuditCheckpoint(ctx context.Context, c Checkpoint) (bool, error)
}

// Checkpointer takes the day's checkpoint: the first replica to call Tick on a UTC day
// signs the head, stores it (the day is a primary key, so one replica wins), and
// exports it — one INFO log line and, when File is set, one appended JSON line.
type Checkpointer struct {
	store  CheckpointStore
	signer *Signer
	now    func() time.Time
	log    *slog.Logger
	file   string

	mu   sync.Mutex
	done string // the last day known to have its checkpoint
}

// NewCheckpointer builds the daily checkpointer. now is the clock (the day comes from
// it); file, when not empty, is appended to.
func NewCheckpointer(st CheckpointStore, signer *Signer, now func() time.Time, log *slog.Logger, file string) *Checkpointer {
	return &Checkpointer{store: st, signer: signer, now: now, log: log, file: file}
}

// Signer is the checkpoints' signer.
func (c *Checkpointer) Signer() *Signer { return c.signer }

// Tick takes today's checkpoint if nobody has: it returns the checkpoint when this
// call took it, nil when today's exists already. Cheap when it does (nothing is read
// once this replica knows).
func (c *Checkpointer) Tick(ctx context.Context) (*Checkpoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now().UTC()
	day := now.Format(DayLayout)
	if day == c.done {
		return nil, nil
	}
	seq, hash, err := c.store.AuditHead(ctx)
	if err != nil {
		return nil, err
	}
	cp := Checkpoint{Day: day, Seq: seq, Hash: hash, Time: FormatTime(now)}
	c.signer.Sign(&cp)
	won, err := c.store.InsertAuditCheckpoint(ctx, cp)
	if err != nil {
		return nil, err
	}
	c.done = day
	if !won {
		return nil, nil // another replica took today's
	}
	c.log.Info("audit checkpoint", "day", cp.Day, "seq", cp.Seq, "hash", cp.Hash, "time", cp.Time, "key", cp.Key, "sig", cp.Sig)
	if c.file != "" {
		if err := appendLine(c.file, &cp); err != nil {
			c.log.Warn("audit checkpoint: cannot append to --audit-checkpoint-file", "file", c.file, "err", err)
		}
	}
	return &cp, nil
}

// appendLine appends cp to path as one JSON line and syncs it.
func appendLine(path string, cp *Checkpoint) error {
	line, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Anchors turns checkpoints that verify with pub into anchors for Verify; the first
// whose signature does not verify is an error naming it (line numbers count from 1 as
// the file's checkpoints do).
func Anchors(cps []Checkpoint, pub ed25519.PublicKey, source string) ([]Anchor, error) {
	out := make([]Anchor, 0, len(cps))
	for i := range cps {
		c := &cps[i]
		name := fmt.Sprintf("checkpoint %s (%s, entry %d)", c.Day, source, i+1)
		if err := c.Check(pub); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		a := Anchor{Seq: c.Seq, Hash: c.Hash, Name: name}
		if c.Seq == 0 && c.Hash != Genesis {
			return nil, fmt.Errorf("%s: seq 0 with a hash other than the empty chain's", name)
		}
		out = append(out, a)
	}
	return out, nil
}
