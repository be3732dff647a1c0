package netutil

import "testing"

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:1": true, "[::1]:9": true, "127.1.2.3:0": true, "::1": true,
		"0.0.0.0:8080": false, "10.0.0.1:80": false, "example.com:80": false, ":8080": false, "[::]:80": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
