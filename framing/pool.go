package framing

import "sync"

// Buffer size classes. The pools store pointers to arrays, so a Put never
// allocates (a slice header stored in an interface would).
const (
	class4K   = 4 << 10
	class16K  = 16 << 10
	class64K  = 64 << 10
	class256K = 256 << 10
	class1M   = 1 << 20

	// TopClass is the largest pooled buffer size. AcquireBuf serves bigger
	// requests with a fresh allocation and ReleaseBuf drops such buffers, so
	// one huge message never pins memory in a pool.
	TopClass = class1M
)

var (
	pool4K   = sync.Pool{New: func() any { return new([class4K]byte) }}
	pool16K  = sync.Pool{New: func() any { return new([class16K]byte) }}
	pool64K  = sync.Pool{New: func() any { return new([class64K]byte) }}
	pool256K = sync.Pool{New: func() any { return new([class256K]byte) }}
	pool1M   = sync.Pool{New: func() any { return new([class1M]byte) }}
)

// AcquireBuf returns a buffer with len 0 and cap >= n, taken from the
// smallest size class that fits (4 KiB, 16 KiB, 64 KiB, 256 KiB, 1 MiB).
// For n > TopClass it returns a fresh make([]byte, 0, n), which is never
// pooled. The contents of a pooled buffer are whatever its last user left.
func AcquireBuf(n int) []byte {
	switch {
	case n <= class4K:
		return pool4K.Get().(*[class4K]byte)[:0]
	case n <= class16K:
		return pool16K.Get().(*[class16K]byte)[:0]
	case n <= class64K:
		return pool64K.Get().(*[class64K]byte)[:0]
	case n <= class256K:
		return pool256K.Get().(*[class256K]byte)[:0]
	case n <= class1M:
		return pool1M.Get().(*[class1M]byte)[:0]
	default:
		return make([]byte, 0, n)
	}
}

// ReleaseBuf returns b to the pool of its size class when cap(b) is exactly
// a class size; any other buffer (nil, odd-sized, or bigger than TopClass)
// is dropped for the garbage collector. The caller must own b and must not
// touch it, or any slice of it, afterwards.
func ReleaseBuf(b []byte) {
	switch cap(b) {
	case class4K:
		pool4K.Put((*[class4K]byte)(b[:class4K]))
	case class16K:
		pool16K.Put((*[class16K]byte)(b[:class16K]))
	case class64K:
		pool64K.Put((*[class64K]byte)(b[:class64K]))
	case class256K:
		pool256K.Put((*[class256K]byte)(b[:class256K]))
	case class1M:
		pool1M.Put((*[class1M]byte)(b[:class1M]))
	}
}
