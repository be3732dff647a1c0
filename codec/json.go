package codec

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/encoder"
)

// sonic v1.15.5 key matching (read from its source, not assumed):
//
//   - The native decoders (JIT on amd64, "optdec" on arm64) first look a
//     member name up exactly; only when that fails, and the CaseSensitive
//     option is off, do they retry with strings.ToLower(name) against the
//     lower-cased field names. So by default {"Method":"x"} fills a field
//     tagged "method", and a Kelvin-sign "\u212A" (which ToLower maps to
//     'k') matches a "k…" field; "ſ" (U+017F) does not match (ToLower keeps it).
//   - Config.CaseSensitive (decoder.OptionCaseSensitive) turns the retry off:
//     exact, case-sensitive matching only.
//   - On Go >= 1.28 (build tag go1.28 in v1.15.5, not go1.27), on
//     architectures other than amd64/arm64, and on arm64 before Go 1.20,
//     sonic compiles compat.go instead, which is encoding/json: CaseSensitive
//     is then silently ignored and keys fold with full Unicode simple folding
//     (bytes.EqualFold semantics). UsingFallback detects that; Peek rejects
//     case-variant members before anything is decoded either way (A10).
var api = sonic.Config{
	CaseSensitive:    true,  // A10, CVE-2026-27896
	EscapeHTML:       false, // JSON-RPC is not embedded in HTML
	ValidateString:   true,  // encoder: invalid UTF-8 → \ufffd; decoder: reject raw control chars
	CopyString:       true,  // decoded strings never alias pooled input buffers
	NoEncoderNewline: true,
}.Froze()

// encOpts mirrors api's encoder options for encoder.EncodeInto.
const encOpts = encoder.ValidateString | encoder.NoEncoderNewline

// Marshal encodes v with the package's sonic configuration.
func Marshal(v any) ([]byte, error) {
	return api.Marshal(v)
}

// AppendMarshal encodes v and appends it to dst. It encodes straight into
// the spare capacity of dst (sonic's EncodeInto, through a pooled slice
// header so &dst does not escape), so with a large enough dst the only
// allocation is sonic's own boxing of v (1 alloc, 16 B). If dst must grow,
// the encoding is copied once more. dst[:len(dst)] is never modified, even
// when it holds bytes that are not UTF-8.
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	start := len(dst)
	h := tailPool.Get().(*[]byte)
	*h = dst[start:start:cap(dst)]
	err := encoder.EncodeInto(h, v, encOpts)
	tail := *h
	*h = nil
	tailPool.Put(h)
	if err != nil {
		return dst, err
	}
	if len(tail) == 0 {
		return dst, nil
	}
	if cap(dst) > start && unsafe.SliceData(tail) == unsafe.SliceData(dst[start:cap(dst)]) {
		return dst[:start+len(tail)], nil
	}
	return append(dst, tail...), nil
}

// tailPool holds slice headers for AppendMarshal.
var tailPool = sync.Pool{New: func() any { return new([]byte) }}

// Unmarshal decodes data into v with the package's sonic configuration
// (case-sensitive member names while sonic runs natively). Decoded strings
// do not alias data.
func Unmarshal(data []byte, v any) error {
	return api.Unmarshal(data, v)
}

// anyAPI decodes into the generic form for schema validation: numbers stay
// json.Number (exact integers and decimals), strings may alias the input.
var anyAPI = sonic.Config{
	CaseSensitive: true,
	UseNumber:     true,
}.Froze()

// DecodeAny decodes data into its generic form: map[string]any, []any,
// string, json.Number, bool or nil. Decoded strings may alias data: the
// value must not outlive it.
func DecodeAny(data []byte) (any, error) {
	var v any
	err := anyAPI.Unmarshal(data, &v)
	return v, err
}

// UsingFallback reports whether sonic runs its encoding/json fallback, in
// which case member names match case-insensitively whatever the config says.
// It checks both sonic.APIKind and the behaviour itself: {"Method":"x"}
// decoded into a field tagged "method" must leave it empty.
func UsingFallback() bool {
	return fallback()
}

var fallback = sync.OnceValue(func() bool {
	if sonic.APIKind != sonic.UseSonicJSON {
		return true
	}
	var probe struct {
		Method string `json:"method"`
	}
	if err := api.Unmarshal([]byte(`{"Method":"x"}`), &probe); err != nil {
		return true
	}
	return probe.Method != ""
})

// Pretouch compiles sonic's encoder and decoder for t ahead of the first
// message, so that the first request of a type registered at start-up
// (a typed tool's arguments and result) does not pay for the compilation.
func Pretouch(t reflect.Type) error {
	return sonic.Pretouch(t)
}
