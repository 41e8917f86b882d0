package targettest

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
)

// FeedPieces hands in to ex.ParseReply step bytes at a time, as replies arrive on a
// socket, keeping what it did not use, until the reply is done or in runs out. It
// fails the test when ParseReply uses more than it was given, returns an error that
// is not a *target.Error, or shows secret (when not empty) in an error. For fuzz
// targets: whatever the bytes and however they are cut.
func FeedPieces(t *testing.T, ex target.Exchanger, in []byte, step int, secret string) {
	step = max(step, 1)
	var buf []byte
	for i := 0; i < len(in); i += step {
		buf = append(buf, in[i:min(i+step, len(in))]...)
		used, done, err := ex.ParseReply(buf)
		if used < 0 || used > len(buf) {
			t.Fatalf("used %d of %d bytes", used, len(buf))
		}
		buf = buf[used:]
		var te *target.Error
		if err != nil && !errors.As(err, &te) {
			t.Fatalf("unclassified error %v", err)
		}
		if err != nil && secret != "" && strings.Contains(err.Error(), secret) {
			t.Fatalf("the secret shows in %v", err)
		}
		if done {
			return
		}
	}
}
