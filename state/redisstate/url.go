package redisstate

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// The URL forms New accepts:
//
//	redis://[USER[:PASSWORD]@]HOST:PORT/DB                one Redis
//	rediss://…                                            the same over TLS (Config.TLS, else the system's roots)
//	redis://HOST:PORT/DB?addr=HOST2:PORT2&addr=HOST3:PORT3 seeds of a Redis Cluster (detected)
//	unix:///path/to/redis.sock                            one Redis on a Unix socket
//	redis-sentinel://[USER[:PASSWORD]@]S1:PORT/DB?addr=S2:PORT&addr=S3:PORT&master=NAME
//	                                                      the master Sentinel names NAME, found through
//	                                                      the sentinels S1, S2, S3 and followed across failovers
//	rediss-sentinel://…                                   the same with TLS to the sentinels and the master
//
// With TLS each address is verified against the host name it is dialled
// by, unless the query has tls_server_name=NAME (or Config.TLS.ServerName
// is set): then every one against NAME, e.g. for nodes that a cluster
// names by IP address and whose certificates name a DNS name.
//
// USER and PASSWORD are the master's (an ACL user, or only a password for
// "default"). Sentinels are asked without credentials unless the query has
// sentinel_auth=same (the sentinels require the master's user and
// password, as many deployments set them up).

// sentinelRefresh is how often a Sentinel client re-reads the master's
// address besides following +switch-master, so that a missed event does
// not bind it to a demoted master.
const sentinelRefresh = 2 * time.Second

var (
	errSentinelNoMaster  = errors.New("a redis-sentinel:// URL needs master=NAME (the name the sentinels monitor)")
	errMasterNotSentinel = errors.New("master= and master_set= mean Sentinel: write redis-sentinel://SENTINEL:PORT/DB?addr=SENTINEL2:PORT&master=NAME")
	errTLSNotRediss      = errors.New("TLS settings (a CA or a client certificate) given for a URL without TLS: use rediss:// (or rediss-sentinel://)")
)

// clientOption turns a store URL and Config.TLS into the client's options.
// Its errors never hold the URL (it may hold a password).
func clientOption(raw string, tc *tls.Config) (rueidis.ClientOption, error) {
	u, err := neturl.Parse(raw)
	if err != nil {
		if ue := (*neturl.Error)(nil); errors.As(err, &ue) {
			err = ue.Err // its URL may hold a password
		}
		return rueidis.ClientOption{}, err
	}
	q := u.Query()
	var master string
	sentinelAuth := false
	switch u.Scheme {
	case "redis-sentinel", "rediss-sentinel":
		if q.Has("master_set") {
			return rueidis.ClientOption{}, errors.New("master_set=: write master=NAME")
		}
		if master = q.Get("master"); master == "" {
			return rueidis.ClientOption{}, errSentinelNoMaster
		}
		switch a := q.Get("sentinel_auth"); a {
		case "", "none":
		case "same":
			sentinelAuth = true
		default:
			return rueidis.ClientOption{}, fmt.Errorf("sentinel_auth=%q: want none or same", a)
		}
		q.Del("master")
		q.Del("sentinel_auth")
		u.Scheme = strings.TrimSuffix(u.Scheme, "-sentinel")
		u.RawQuery = q.Encode()
	default:
		if q.Has("master") || q.Has("master_set") {
			return rueidis.ClientOption{}, errMasterNotSentinel
		}
		if q.Has("sentinel_auth") {
			return rueidis.ClientOption{}, errors.New("sentinel_auth= needs a redis-sentinel:// URL")
		}
	}
	serverName := q.Get("tls_server_name")
	if q.Has("tls_server_name") {
		q.Del("tls_server_name")
		u.RawQuery = q.Encode()
	}
	co, err := rueidis.ParseURL(u.String())
	if err != nil {
		if ue := (*neturl.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return rueidis.ClientOption{}, err
	}
	if serverName != "" && co.TLSConfig == nil {
		return rueidis.ClientOption{}, errors.New("tls_server_name= needs TLS: use rediss:// (or rediss-sentinel://)")
	}
	if co.TLSConfig != nil {
		// The same tls.Config dials every address (the seeds, the nodes a
		// cluster names, the sentinels and the master they name): with no
		// ServerName each is verified against the host it is dialled by,
		// not against the first URL host (what the URL parser sets).
		co.TLSConfig.ServerName = serverName
	}
	if tc != nil {
		if co.TLSConfig == nil {
			return rueidis.ClientOption{}, errTLSNotRediss
		}
		c := tc.Clone()
		if serverName != "" {
			c.ServerName = serverName
		}
		c.MinVersion = max(c.MinVersion, tls.VersionTLS12)
		c.InsecureSkipVerify = c.InsecureSkipVerify || co.TLSConfig.InsecureSkipVerify
		co.TLSConfig = c
	}
	if master != "" {
		co.Sentinel.MasterSet = master
		co.Sentinel.TLSConfig = co.TLSConfig
		co.Sentinel.TopologyRefreshInterval = sentinelRefresh
		if sentinelAuth {
			co.Sentinel.Username, co.Sentinel.Password = co.Username, co.Password
		}
	}
	return co, nil
}

// LoadTLS builds Config.TLS from PEM files: caFile, the certificate
// authorities that sign Redis's certificate ("": the system's roots), and
// optionally a client certificate and its key (both or neither) for a
// Redis that requires one (tls-auth-clients). Use it with a rediss:// or
// rediss-sentinel:// URL.
func LoadTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		b, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("redisstate: CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("redisstate: CA file %s holds no PEM certificate", caFile)
		}
		c.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("redisstate: a client certificate needs both its certificate file and its key file")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("redisstate: client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
