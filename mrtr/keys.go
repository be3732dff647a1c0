package mrtr

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// KeysEnv is the environment variable LoadKeys reads when no key file is
// given: the keys, comma-separated, in the key file's encoding.
const KeysEnv = "MCPWIRE_STATE_KEYS"

// MinKeyBytes is the shortest HMAC key accepted, in bytes (32 hex digits).
// 32 bytes, SHA-256's block-sized strength, is what to generate:
// `openssl rand -hex 32`.
const MinKeyBytes = 16

// ErrNoKeys: a key file or list holds no key.
var ErrNoKeys = errors.New("mrtr: no keys")

// ParseKeys reads a key list in the format of `mcpwire serve
// --state-key-file`: keys separated by newlines or commas, each in hex
// (at least 32 digits) or in base64 after a "base64:" prefix (standard or
// URL alphabet, padded or not), at least MinKeyBytes long. Blank lines and
// lines starting with # are skipped. The first key signs; every key
// verifies. Errors name the key by its position, never by its value.
func ParseKeys(text string) ([][]byte, error) {
	var keys [][]byte
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, item := range strings.Split(line, ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			k, err := parseKey(item)
			if err != nil {
				return nil, fmt.Errorf("mrtr: key %d: %w", len(keys)+1, err)
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, ErrNoKeys
	}
	return keys, nil
}

func parseKey(item string) ([]byte, error) {
	var k []byte
	var err error
	if rest, ok := strings.CutPrefix(item, "base64:"); ok {
		rest = strings.TrimRight(rest, "=")
		k, err = base64.RawStdEncoding.DecodeString(rest)
		if err != nil {
			k, err = base64.RawURLEncoding.DecodeString(rest)
		}
		if err != nil {
			return nil, errors.New("not base64")
		}
	} else if k, err = hex.DecodeString(item); err != nil {
		return nil, errors.New("not hex (or base64: with the prefix)")
	}
	if len(k) < MinKeyBytes {
		return nil, fmt.Errorf("%d bytes, want at least %d", len(k), MinKeyBytes)
	}
	return k, nil
}

// LoadKeys returns a fleet's keys: from file when it is not "" (see
// ParseKeys), else from the environment variable KeysEnv read through
// getenv (nil: os.Getenv). Neither: nil and no error, which Config.Keys
// takes as "a random key for this process" (replicas then refuse each
// other's states). A key file readable by group or others is loaded with
// a warning to log (nil: slog.Default()): keys mounted from a secret store
// often are, and refusing them would break working deployments.
//
// To rotate: deploy "new, old" (the new key first) everywhere, then "new"
// alone once states signed with old have expired (Config.TTL).
func LoadKeys(file string, getenv func(string) string, log *slog.Logger) ([][]byte, error) {
	if file == "" {
		if getenv == nil {
			getenv = os.Getenv
		}
		v := getenv(KeysEnv)
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		keys, err := ParseKeys(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeysEnv, err)
		}
		return keys, nil
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("mrtr: key file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if log == nil {
			log = slog.Default()
		}
		log.Warn("state key file is readable by group or others", "file", file, "mode", fi.Mode().Perm().String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("mrtr: key file: %w", err)
	}
	keys, err := ParseKeys(string(b))
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, file)
	}
	return keys, nil
}
