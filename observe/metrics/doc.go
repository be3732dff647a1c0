// Package metrics exports an engine's counters, gauges and request-duration
// histograms in the Prometheus format (github.com/prometheus/client_golang).
//
// Nothing is recorded for the exporter: a Collector reads, at scrape time,
// the atomics the engine and its transports keep anyway (engine.Stats,
// streamhttp.Stats, socket.Stats, redisstate.Stats…), the engine's
// duration histograms (fixed arrays of atomics indexed by method and
// transport label, updated with no allocation), the in-flight table and
// the transports' gauges. A request therefore costs the same with or
// without a Collector registered: two monotonic clock reads and two atomic
// adds, which the engine does in any case.
//
// Metric names:
//
//   - mcpwire_<subsystem>_<field>_total for every atomic.Uint64 field of
//     a Stats struct given to AddStats (the engine's as "engine"), and
//     mcpwire_<subsystem>_<field> for every atomic.Int64 field (levels,
//     such as engine listen_streams or socket open). The <field> part and
//     the HELP text are written down per field (names.go; docs/operations.md
//     lists them), never derived from the Go name.
//   - mcpwire_request_duration_seconds{method, transport}: from the
//     request's arrival to its response (a listen stream: to its end;
//     on the line transports arrival is the read that delivered the
//     request, so its wait behind the requests of the same read counts,
//     and a request answered where it was read ends with the last of that
//     read's requests, when their answers leave together);
//     method "other" for requests answered before routing; transport
//     "http", "tcp", "unix", "stdio" or "legacy" (the 2025-11-25 front,
//     on HTTP or lines). Buckets from
//     25 µs to 30 s (engine.DurationBounds).
//   - mcpwire_in_flight_requests{transport}, mcpwire_listen_streams{transport}.
//   - mcpwire_shutting_down, mcpwire_backplane_up.
//   - whatever AddGauge adds (the reference server adds
//     mcpwire_open_connections{transport} and mcpwire_queued_bytes{transport}).
//   - with Registry: the Go runtime's go_* and the process's process_*
//     metrics (resident memory, CPU, file descriptors).
//
// Why client_golang and not OpenTelemetry metrics with its Prometheus
// exporter: client_golang's const metrics let a custom Collector turn
// existing atomics into counters, gauges and histograms at scrape time,
// so the request path records nothing for the exporter. OpenTelemetry has
// no asynchronous histogram: durations would have to go through a
// synchronous Record on every request (measured in bench/metricscmp).
package metrics
