// Package clustertest is the multi-replica test of issue 11 (make
// cluster-test): redis-server, three `mcpwire serve` replicas sharing it
// and HAProxy (deploy/haproxy.cfg) on loopback, driven over plain HTTP.
// The test is behind the "cluster" build tag; it needs bin/mcpwire,
// redis-server and haproxy (the make target installs the last two).
package clustertest
