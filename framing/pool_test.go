package framing

import "testing"

func TestAcquireBuf(t *testing.T) {
	tests := []struct {
		n       int
		wantCap int
	}{
		{-1, class4K},
		{0, class4K},
		{1, class4K},
		{class4K, class4K},
		{class4K + 1, class16K},
		{class16K, class16K},
		{class64K - 1, class64K},
		{class256K, class256K},
		{TopClass - 1, TopClass},
		{TopClass, TopClass},
		{TopClass + 1, TopClass + 1},
		{3 << 20, 3 << 20},
	}
	for i, tc := range tests {
		b := AcquireBuf(tc.n)
		if len(b) != 0 || cap(b) != tc.wantCap || cap(b) < tc.n {
			t.Errorf("#%d AcquireBuf(%d): len %d cap %d, want len 0 cap %d", i, tc.n, len(b), cap(b), tc.wantCap)
		}
		ReleaseBuf(b)
	}
}

func TestReleaseBufDropsUnpoolable(t *testing.T) {
	// None of these may reach a pool: a later AcquireBuf must never return
	// them. Pools only hold class-sized arrays, so every acquired buffer's
	// cap is a class size and its backing array is not one of these.
	odd := []([]byte){
		nil,
		make([]byte, 0, 5000),
		make([]byte, 10, class4K+1),
		make([]byte, 0, TopClass+1),
		make([]byte, 0, 2*TopClass),
	}
	for _, b := range odd {
		ReleaseBuf(b) // must not panic
	}
	for range 10 {
		for _, n := range []int{class4K, class16K, class64K, class256K, TopClass} {
			b := AcquireBuf(n)
			if cap(b) != n {
				t.Fatalf("AcquireBuf(%d) cap %d", n, cap(b))
			}
			for _, o := range odd {
				if cap(o) > 0 && &b[:1][0] == &o[:1][0] {
					t.Fatalf("an unpoolable buffer came back from the pool")
				}
			}
		}
	}
	// A class-sized buffer whose len is not zero is still accepted.
	b := AcquireBuf(class16K)
	ReleaseBuf(b[:100])
}
