package legacy

// CountLoopbackIPs makes s treat a loopback client IP as naming a caller,
// so that the per-IP bounds can be tested on loopback (127.0.0.1 and
// 127.0.0.2 as two clients).
func CountLoopbackIPs(s *Server) { s.countLoopback = true }
