package measure

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Encode returns h in HdrHistogram's compressed V2 encoding (base64 text, as the other
// HdrHistogram implementations read it), or nil for a nil or empty histogram.
func Encode(h *hdr.Histogram) ([]byte, error) {
	if h == nil || h.TotalCount() == 0 {
		return nil, nil
	}
	return h.Encode(hdr.V2CompressedEncodingCookieBase)
}

// Decode reverses Encode; nil or empty input gives an empty histogram.
func Decode(b []byte) (h *hdr.Histogram, err error) {
	if len(b) == 0 {
		return NewHistogram(), nil
	}
	defer func() {
		// The library can panic on some malformed input; a stored blob must never
		// take fathom down.
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("corrupt histogram: %v", r)
		}
	}()
	h, err = hdr.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("corrupt histogram: %w", err)
	}
	return h, nil
}
