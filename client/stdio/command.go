package stdio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/mcpwire/mcpwire/client"
)

// Command starts an MCP server as a child process for a client (STD-01):
// its stdin and stdout carry the protocol, its stderr goes to a logger,
// line by line, never read as an error signal (STD-05).
//
//	cmd := &stdio.Command{Path: "./server", Args: []string{"--stdio"}}
//	c := client.New(client.NewLineTransport(cmd.Dial, client.LineConfig{}), client.Config{})
//
// Each Dial starts a new process, so a LineTransport that re-dials after a
// crash restarts the server (STD-14). Closing the stream runs the STD-11
// stop sequence: close stdin, wait CloseWait, SIGTERM, wait TermWait,
// SIGKILL. Windows has no SIGTERM: there it is close stdin, wait
// CloseWait, then kill the process (TerminateProcess, through
// os.Process.Kill); TermWait is not used. Stderr lines are read until the
// child has exited and one more second has passed: a grandchild that keeps
// the pipe open cannot hold Close up.
type Command struct {
	Path string   // program (looked up in PATH when it has no slash)
	Args []string // arguments after the program name
	Env  []string // environment; nil: this process's
	Dir  string   // working directory; "": this process's
	// Stderr receives the child's stderr lines. Default: Logger at Info
	// with attribute "server_stderr".
	Stderr func(line string)
	// Logger for stderr lines and lifecycle events. Default slog.Default().
	Logger *slog.Logger
	// CloseWait is how long the child has to exit after its stdin closes
	// (STD-12). Default 2 s.
	CloseWait time.Duration
	// TermWait is how long it has after SIGTERM before SIGKILL. Default
	// 2 s. Not used on Windows (no SIGTERM).
	TermWait time.Duration
}

// Dial starts the process; it satisfies client.Dialer.
func (c *Command) Dial(ctx context.Context) (io.ReadWriteCloser, error) {
	path := c.Path
	if path == "" {
		return nil, errors.New("stdio: Command.Path is empty")
	}
	logger := c.Logger
	if logger == nil {
		logger = slog.Default()
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := exec.Command(path, c.Args...)
	cmd.Env, cmd.Dir = c.Env, c.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("stdio: start %s: %w", path, err)
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, exited: make(chan struct{}), logger: logger,
		closeWait: c.CloseWait, termWait: c.TermWait}
	if p.closeWait <= 0 {
		p.closeWait = 2 * time.Second
	}
	if p.termWait <= 0 {
		p.termWait = 2 * time.Second
	}
	sink := c.Stderr
	if sink == nil {
		pid := cmd.Process.Pid
		sink = func(line string) { logger.Info("server stderr", "pid", pid, "server_stderr", line) }
	}
	p.stderrDone = make(chan struct{})
	p.stderr = errR
	go func() {
		defer close(p.stderrDone)
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 4096), 64<<10)
		for sc.Scan() {
			sink(sc.Text())
		}
		// A line over 64 KiB ends the scan; drain the rest unread.
		_, _ = io.Copy(io.Discard, errR)
	}()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	logger.Debug("stdio: server started", "path", path, "pid", cmd.Process.Pid)
	return p, nil
}

// stderrGrace is how long Close, once the child has exited, waits for the
// rest of its stderr before it stops reading.
const stderrGrace = time.Second

// process is a running child: Read is its stdout, Write its stdin.
type process struct {
	cmd        *exec.Cmd
	stdin      *os.File
	stdout     *os.File
	exited     chan struct{}
	stderrDone chan struct{}
	stderr     *os.File // read end of the child's stderr; closed by Close
	waitErr    error
	logger     *slog.Logger

	closeWait, termWait time.Duration
	once                sync.Once
	closeErr            error
}

func (p *process) Read(b []byte) (int, error)  { return p.stdout.Read(b) }
func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close runs the STD-11 stop sequence and reaps the child. It returns nil
// when the child exited by itself after stdin closed.
func (p *process) Close() error {
	p.once.Do(func() {
		p.stdin.Close()
		wait := func(ch <-chan struct{}, d time.Duration) bool {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ch:
				return true
			case <-t.C:
				return false
			}
		}
		switch {
		case wait(p.exited, p.closeWait):
		case terminate(p.cmd.Process) && wait(p.exited, p.termWait):
			p.closeErr = errors.New("stdio: server needed SIGTERM to stop")
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
			p.closeErr = errKilled
		}
		p.stdout.Close()
		// A grandchild may hold the stderr pipe open after the server has
		// gone: read what comes within stderrGrace, then stop reading.
		if !wait(p.stderrDone, stderrGrace) {
			// Closing the pipe ends the blocked read where the pipe is
			// pollable (Unix); elsewhere the reader is left to end with
			// the grandchild rather than hang Close.
			p.stderr.Close()
			wait(p.stderrDone, stderrGrace)
			p.logger.Warn("stdio: another process still holds the server's stderr open: stopped reading it", "pid", p.cmd.Process.Pid)
		}
		if p.closeErr != nil {
			p.logger.Warn(p.closeErr.Error(), "pid", p.cmd.Process.Pid)
		}
	})
	return p.closeErr
}

// Exited is closed when the child has exited (tests).
func (p *process) Exited() <-chan struct{} { return p.exited }

// Pid is the child's process id.
func (p *process) Pid() int { return p.cmd.Process.Pid }

var _ client.Dialer = (&Command{}).Dial
