package netutil

import (
	"net/url"
	"testing"
)

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

// TestRedactURL (F10): the password of any URL in a string is replaced,
// the rest kept; strings without one come back unchanged.
func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redis://user:s3cret@10.0.0.1:6379/0", "redis://user:xxxxx@10.0.0.1:6379/0"},
		{"rediss://:s3cret@h:6380", "rediss://:xxxxx@h:6380"},
		{"--state=redis://u:p%40ss@h/1", "--state=redis://u:xxxxx@h/1"},
		{"redis://u:a@b@h/0", "redis://u:xxxxx@h/0"},
		{"redis://user@h/0", "redis://user@h/0"},
		{"redis://h:6379/0?x=a:b@c", "redis://h:6379/0?x=a:b@c"},
		{"a=http://u:p@x/ b=http://v:q@y", "a=http://u:xxxxx@x/ b=http://v:xxxxx@y"},
		{"memory", "memory"},
		{"", ""},
		{"://:@", "://:xxxxx@"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	args := []string{"mcpwire", "serve", "--state", "redis://:pw@h/0"}
	if got := RedactArgs(args); got[3] != "redis://:xxxxx@h/0" || args[3] != "redis://:pw@h/0" {
		t.Errorf("RedactArgs: %q (input now %q)", got, args)
	}
}

// FuzzRedactURL: a redacted string holds no password any more (URL
// parsing finds none, or only the Redacted mark), and redacting again
// changes nothing.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"redis://user:s3cret@10.0.0.1:6379/0", "rediss://:p@h", "x://a:b@c://d:e@f", "http://[::1]:80/", "a://b:c", "::@//:@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := RedactURL(s)
		if RedactURL(r) != r {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, r, RedactURL(r))
		}
		if u, err := url.Parse(r); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && p != Redacted {
				t.Fatalf("RedactURL(%q) = %q still holds password %q", s, r, p)
			}
		}
	})
}
