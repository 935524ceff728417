package lambda

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

const (
	maxSyncPayload  = 6 << 20
	maxAsyncPayload = 1 << 20
	// credentialLifetime is how long a process's role credentials last.
	credentialLifetime = 12 * time.Hour
)

// runSpec is what a process is started with: a snapshot of the function's
// configuration.
type runSpec struct {
	name, arn  string
	codeDir    string
	arch       string
	handler    string
	role       string
	logGroup   string
	timeout    time.Duration
	memory     int
	env        map[string]string
	reserved   int // -1 when unreserved
	accountCap int
}

// result is the outcome of one invocation.
type result struct {
	payload []byte
	// functionError is "Unhandled" for a failed invocation, "" on success.
	functionError string
	errorType     string
	initDuration  time.Duration
	duration      time.Duration
	logs          []string
}

// invocation is one request handed to a process.
type invocation struct {
	id       string
	payload  []byte
	traceID  string
	deadline time.Time
	started  chan struct{} // closed when the runtime received it
	done     chan struct{} // closed when res is set
	res      result
	// guarded by pool.mu
	finished  bool
	startedAt time.Time
	logs      []string
	logBytes  int
}

// instance is one process of a function with its Runtime API listener.
type instance struct {
	p      *pool
	spec   runSpec
	stream string
	cmd    *exec.Cmd
	ln     net.Listener
	srv    *http.Server
	work   chan *invocation
	dead   chan struct{}

	// guarded by pool.mu
	busy      bool
	retired   bool
	exited    bool
	inv       *invocation
	spawnedAt time.Time
	initDur   time.Duration
	initDone  bool
	killNext  bool
	killed    bool
	proc      *os.Process
	out       *output
	// servedBefore is set once an invocation was delivered.
	servedBefore bool
}

// pool holds the processes of one function.
type pool struct {
	s *Service
	f *function

	mu        sync.Mutex
	instances map[*instance]struct{}
	busy      int
	closed    bool
	killNext  bool
	started   int // processes started in total
}

func newPool(s *Service, f *function) *pool {
	return &pool{s: s, f: f, instances: map[*instance]struct{}{}}
}

// errThrottled is returned by acquire when the concurrency cap is reached.
var errThrottled = errors.New("throttled")

// acquire reserves a free process or starts one. cold reports a new
// process.
func (p *pool) acquire(spec runSpec) (inst *instance, cold bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, awsapi.NotFound404("Function not found: %s", spec.arn)
	}
	for i := range p.instances {
		if !i.busy && !i.retired && !i.exited {
			i.busy = true
			p.busy++
			p.mu.Unlock()
			return i, false, nil
		}
	}
	limit := spec.accountCap
	if spec.reserved >= 0 {
		limit = spec.reserved
	}
	if p.busy >= limit {
		p.mu.Unlock()
		return nil, false, errThrottled
	}
	inst = &instance{p: p, spec: spec, work: make(chan *invocation, 1), dead: make(chan struct{}), busy: true}
	p.instances[inst] = struct{}{}
	p.busy++
	p.started++
	p.mu.Unlock()
	if err := inst.start(); err != nil {
		p.mu.Lock()
		delete(p.instances, inst)
		p.busy--
		inst.exited = true
		p.mu.Unlock()
		close(inst.dead)
		return nil, false, err
	}
	return inst, true, nil
}

// release returns a process after an invocation; retired or dead
// processes are stopped.
func (p *pool) release(inst *instance) {
	p.mu.Lock()
	inst.busy = false
	inst.inv = nil
	p.busy--
	stop := inst.retired || p.closed
	p.mu.Unlock()
	if stop {
		inst.kill()
	}
}

// retire stops the free processes and marks the busy ones to stop after
// their invocation: configuration or code changed.
func (p *pool) retire() {
	p.mu.Lock()
	var free []*instance
	for i := range p.instances {
		i.retired = true
		if !i.busy {
			free = append(free, i)
		}
	}
	p.mu.Unlock()
	for _, i := range free {
		i.kill()
	}
}

// shutdown stops every process and waits for them to exit.
func (p *pool) shutdown() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.stopAll()
}

// stopAll stops every process (the function's next invocation starts
// cold). It waits for them to exit.
func (p *pool) stopAll() int {
	p.mu.Lock()
	all := make([]*instance, 0, len(p.instances))
	for i := range p.instances {
		i.retired = true
		all = append(all, i)
	}
	p.mu.Unlock()
	for _, i := range all {
		i.kill()
	}
	for _, i := range all {
		<-i.dead
	}
	return len(all)
}

// counts returns the live, busy (reserved for an invocation) and running
// (an invocation delivered to the runtime) processes.
func (p *pool) counts() (live, busy, running, started int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.instances {
		if i.inv != nil && !i.inv.finished && !i.inv.startedAt.IsZero() {
			running++
		}
	}
	return len(p.instances), p.busy, running, p.started
}

// killInFlight kills a process in the middle of its current invocation, or
// arms the kill for the next invocation delivered to any process.
func (p *pool) killInFlight() (killedNow bool) {
	p.mu.Lock()
	var victim *instance
	for i := range p.instances {
		if i.inv != nil && !i.inv.finished && i.inv.startedAtSet() {
			victim = i
			break
		}
	}
	if victim == nil {
		p.killNext = true
	}
	p.mu.Unlock()
	if victim != nil {
		victim.kill()
		return true
	}
	return false
}

func (inv *invocation) startedAtSet() bool { return !inv.startedAt.IsZero() }

// finishLocked sets the result once; pool.mu is held.
func (inv *invocation) finishLocked(res result) bool {
	if inv.finished {
		return false
	}
	inv.finished = true
	res.logs = inv.logs
	if !inv.startedAt.IsZero() {
		res.duration = time.Since(inv.startedAt)
	}
	inv.res = res
	close(inv.done)
	return true
}

// errorPayload is the {"errorMessage","errorType"} body of a failed
// invocation.
func errorPayload(errType, msg string) []byte {
	b, _ := json.Marshal(struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}{msg, errType})
	return b
}

// command returns the executable and arguments that run bootstrap for an
// architecture: natively, or through qemu user emulation.
func command(bootstrap, arch string) (string, []string, error) {
	want := map[string]string{"x86_64": "amd64", "arm64": "arm64"}[arch]
	if want == runtime.GOARCH {
		return bootstrap, nil, nil
	}
	emu := map[string]string{"arm64": "qemu-aarch64", "x86_64": "qemu-x86_64"}[arch]
	for _, name := range []string{emu, emu + "-static"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, []string{bootstrap}, nil
		}
	}
	return "", nil, awsapi.NewServerError("ServiceException",
		"cannot run the %s function on this %s host: %s is not installed (Debian package qemu-user)", arch, runtime.GOARCH, emu)
}

// start launches the process with its Runtime API listener.
func (inst *instance) start() error {
	spec := inst.spec
	s := inst.p.s
	exe, args, err := entrypoint(spec)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening for the Runtime API: %w", err)
	}
	inst.ln = ln
	now := s.env.Time().UTC()
	inst.stream = now.Format("2006/01/02") + "/[$LATEST]" + awsapi.RandomHex(16)
	sess := s.env.Credentials.IssueRoleSession(spec.role, spec.name, credentialLifetime)

	cmd := exec.Command(exe, args...)
	cmd.Dir = spec.codeDir
	cmd.Env = inst.environment(ln.Addr().String(), sess)
	out, err := newOutput(inst.logLine)
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("creating output pipes: %w", err)
	}
	inst.out = out
	cmd.Stdout, cmd.Stderr = out.stdoutW, out.stderrW
	inst.cmd = cmd
	inst.serveRuntimeAPI(ln)

	inst.p.mu.Lock()
	inst.spawnedAt = time.Now()
	inst.p.mu.Unlock()
	err = cmd.Start()
	out.closeWriters()
	if err != nil {
		out.wait()
		_ = inst.srv.Close()
		s.env.Credentials.Revoke(sess.AccessKeyID)
		return entrypointError(err.Error())
	}
	inst.p.mu.Lock()
	inst.proc = cmd.Process
	killed := inst.killed || inst.p.closed
	inst.p.mu.Unlock()
	go inst.wait(sess.AccessKeyID)
	if killed {
		_ = cmd.Process.Kill()
	}
	return nil
}

// entrypoint finds the function's bootstrap and the command that runs it
// on this host.
func entrypoint(spec runSpec) (string, []string, error) {
	bootstrap := filepath.Join(spec.codeDir, "bootstrap")
	st, err := os.Stat(bootstrap)
	if err != nil || st.IsDir() {
		return "", nil, entrypointError("Couldn't find valid bootstrap(s): [/var/task/bootstrap /opt/bootstrap]")
	}
	if st.Mode().Perm()&0o111 == 0 {
		return "", nil, entrypointError("fork/exec /var/task/bootstrap: permission denied")
	}
	return command(bootstrap, spec.arch)
}

// environment is the process environment of a Lambda runtime, with the
// Runtime API at runtimeAPI and the execution role's session.
func (inst *instance) environment(runtimeAPI string, sess awsapi.RoleSession) []string {
	spec := inst.spec
	s := inst.p.s
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/opt/bin",
		"LANG=en_US.UTF-8",
		"TZ=:UTC",
		"LAMBDA_TASK_ROOT=" + spec.codeDir,
		"LAMBDA_RUNTIME_DIR=" + spec.codeDir,
		"_HANDLER=" + spec.handler,
		"AWS_REGION=" + s.env.Region,
		"AWS_DEFAULT_REGION=" + s.env.Region,
		"AWS_LAMBDA_FUNCTION_NAME=" + spec.name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(spec.memory),
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME=" + spec.logGroup,
		"AWS_LAMBDA_LOG_STREAM_NAME=" + inst.stream,
		"AWS_LAMBDA_RUNTIME_API=" + runtimeAPI,
		"AWS_ACCESS_KEY_ID=" + sess.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + sess.SecretAccessKey,
		"AWS_SESSION_TOKEN=" + sess.SessionToken,
		"AWS_ENDPOINT_URL=" + s.env.Endpoint,
	}
	for k, v := range spec.env {
		env = append(env, k+"="+v)
	}
	return env
}

// serveRuntimeAPI serves the Runtime API on ln.
func (inst *instance) serveRuntimeAPI(ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", inst.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", inst.response)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", inst.invocationError)
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", inst.initError)
	inst.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = inst.srv.Serve(ln) }()
}

// entryError is a failure to start a function's process: the invocation
// fails with Runtime.InvalidEntrypoint, as in AWS.
type entryError struct{ msg string }

func (e *entryError) Error() string { return e.msg }

func entrypointError(msg string) error { return &entryError{msg: msg} }

// wait reaps the process and fails its in-flight invocation.
func (inst *instance) wait(akid string) {
	err := inst.cmd.Wait()
	inst.out.wait()
	p := inst.p
	p.mu.Lock()
	inst.exited = true
	delete(p.instances, inst)
	if inv := inst.inv; inv != nil && !inv.finished && (!inv.startedAt.IsZero() || !inst.servedBefore) {
		reason := "exit status 0"
		if err != nil {
			reason = err.Error()
		}
		msg := "RequestId: " + inv.id + " Error: Runtime exited with error: " + reason
		inv.logs = append(inv.logs, msg)
		inv.finishLocked(result{payload: errorPayload("Runtime.ExitError", msg), functionError: "Unhandled", errorType: "Runtime.ExitError"})
		p.mu.Unlock()
		inst.p.s.emitLog(inst.spec.logGroup, inst.stream, msg)
	} else {
		p.mu.Unlock()
	}
	close(inst.dead)
	_ = inst.srv.Close()
	p.s.env.Credentials.Revoke(akid)
}

// kill stops the process (it is reaped by wait), or makes start stop it
// when it has not started yet.
func (inst *instance) kill() {
	inst.p.mu.Lock()
	inst.killed = true
	proc := inst.proc
	inst.p.mu.Unlock()
	if proc != nil {
		_ = proc.Kill()
	}
}

func (inst *instance) logLine(line string) {
	p := inst.p
	p.mu.Lock()
	if inv := inst.inv; inv != nil && inv.logBytes < 8<<10 {
		inv.logs = append(inv.logs, line)
		inv.logBytes += len(line) + 1
	}
	p.mu.Unlock()
	p.s.emitLog(inst.spec.logGroup, inst.stream, line)
}

// ---- Runtime API ----

func runtimeError(w http.ResponseWriter, status int, errType, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorPayload(errType, msg))
}

func accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, `{"status":"OK"}`)
}

func (inst *instance) next(w http.ResponseWriter, r *http.Request) {
	p := inst.p
	p.mu.Lock()
	if !inst.initDone {
		inst.initDone = true
		inst.initDur = time.Since(inst.spawnedAt)
	}
	p.mu.Unlock()
	var inv *invocation
	select {
	case inv = <-inst.work:
	case <-r.Context().Done():
		return
	case <-inst.dead:
		return
	}
	p.mu.Lock()
	if inv.finished {
		// Timed out or failed before delivery.
		p.mu.Unlock()
		runtimeError(w, http.StatusInternalServerError, "ServiceException", "invocation no longer available")
		return
	}
	inv.startedAt = time.Now()
	inv.deadline = inv.startedAt.Add(inst.spec.timeout)
	killNow := p.killNext || inst.killNext
	p.killNext, inst.killNext = false, false
	close(inv.started)
	inst.servedBefore = true
	p.mu.Unlock()
	p.s.emitLog(inst.spec.logGroup, inst.stream, "START RequestId: "+inv.id+" Version: $LATEST")
	if killNow {
		// The invocation has started; the process dies before it can
		// answer, whatever its speed.
		inst.kill()
		<-inst.dead
		return
	}

	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", inst.spec.arn)
	h.Set("Lambda-Runtime-Trace-Id", inv.traceID)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(inv.payload)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(inv.payload)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// current returns the in-flight invocation with id, or nil.
func (inst *instance) current(id string) *invocation {
	if inv := inst.inv; inv != nil && inv.id == id && !inv.startedAt.IsZero() && !inv.finished {
		return inv
	}
	return nil
}

func (inst *instance) response(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxSyncPayload+1))
	if err != nil {
		runtimeError(w, http.StatusBadRequest, "InvalidRequest", err.Error())
		return
	}
	id := r.PathValue("id")
	res := result{payload: body}
	if t := r.Trailer.Get("Lambda-Runtime-Function-Error-Type"); t != "" {
		// The runtime failed while streaming the response.
		b, _ := base64.StdEncoding.DecodeString(r.Trailer.Get("Lambda-Runtime-Function-Error-Body"))
		if !json.Valid(b) {
			b = errorPayload(t, string(b))
		}
		res = result{payload: b, functionError: "Unhandled", errorType: t}
	} else if len(body) > maxSyncPayload {
		msg := fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", maxSyncPayload)
		res = result{payload: errorPayload("Function.ResponseSizeTooLarge", msg), functionError: "Unhandled", errorType: "Function.ResponseSizeTooLarge"}
	}
	inst.finish(w, id, res)
}

// finish ends the invocation id with res, as the runtime reported it.
func (inst *instance) finish(w http.ResponseWriter, id string, res result) {
	p := inst.p
	p.mu.Lock()
	inv := inst.current(id)
	if inv == nil {
		p.mu.Unlock()
		runtimeError(w, http.StatusBadRequest, "InvalidRequestID", "Invalid request ID")
		return
	}
	inv.finishLocked(res)
	p.mu.Unlock()
	accepted(w)
}

func (inst *instance) invocationError(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxSyncPayload))
	id := r.PathValue("id")
	errType := errorTypeOf(body, r.Header.Get("Lambda-Runtime-Function-Error-Type"))
	if !json.Valid(body) || len(bytes.TrimSpace(body)) == 0 {
		body = errorPayload(errType, string(body))
	}
	inst.finish(w, id, result{payload: body, functionError: "Unhandled", errorType: errType})
}

func (inst *instance) initError(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxSyncPayload))
	errType := errorTypeOf(body, r.Header.Get("Lambda-Runtime-Function-Error-Type"))
	if !json.Valid(body) || len(bytes.TrimSpace(body)) == 0 {
		body = errorPayload(errType, string(body))
	}
	p := inst.p
	p.mu.Lock()
	inst.retired = true
	if inv := inst.inv; inv != nil && !inv.finished {
		inv.finishLocked(result{payload: body, functionError: "Unhandled", errorType: errType})
	}
	p.mu.Unlock()
	accepted(w)
	go func() {
		// The runtime exits after reporting; make sure it does.
		select {
		case <-inst.dead:
		case <-time.After(2 * time.Second):
			inst.kill()
		}
	}()
}

func errorTypeOf(body []byte, header string) string {
	var e struct {
		ErrorType string `json:"errorType"`
	}
	if json.Unmarshal(body, &e) == nil && e.ErrorType != "" {
		return e.ErrorType
	}
	if header != "" {
		return header
	}
	return "Unhandled"
}

// lineWriter splits a process's output into lines.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	emit func(string)
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(w.buf[:i]), "\r")
		w.buf = w.buf[i+1:]
		w.emit(line)
	}
	if len(w.buf) > 256<<10 {
		w.emit(string(w.buf))
		w.buf = nil
	}
	return len(b), nil
}

// flush emits a last line without newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(string(w.buf))
		w.buf = nil
	}
}

// ---- invocation ----

// run invokes a function synchronously on one of its processes.
func (s *Service) run(ctx context.Context, f *function, spec runSpec, payload []byte) (result, error) {
	for attempt := 1; ; attempt++ {
		res, retry, err := s.runOnce(ctx, f, spec, payload)
		if !retry || attempt == 3 {
			return res, err
		}
	}
}

// runOnce runs an invocation on one process. retry is true when the
// process, warm from earlier invocations, exited before it received the
// invocation (a runtime exits after a panic): the invocation may run on
// another process.
func (s *Service) runOnce(_ context.Context, f *function, spec runSpec, payload []byte) (res result, retry bool, err error) {
	inst, cold, err := f.pool.acquire(spec)
	if err != nil {
		var ee *entryError
		if errors.As(err, &ee) {
			return s.entrypointFailed(spec, ee), false, nil
		}
		return result{}, false, err
	}
	inv := &invocation{
		id:      awsapi.NewUUID(),
		payload: payload,
		traceID: fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0;Lineage=1:%s:0", time.Now().Unix(), awsapi.RandomHex(12), awsapi.RandomHex(8), awsapi.RandomHex(4)),
		started: make(chan struct{}),
		done:    make(chan struct{}),
	}
	f.pool.mu.Lock()
	inst.inv = inv
	f.pool.mu.Unlock()
	inst.work <- inv

	if s.await(inst, inv, spec, cold) {
		f.pool.release(inst)
		return result{}, true, nil
	}
	res = s.report(inst, inv, spec, cold)
	f.pool.release(inst)
	return res, false, nil
}

// entrypointFailed is the result of an invocation whose process could not
// start, logged as Lambda logs it.
func (s *Service) entrypointFailed(spec runSpec, ee *entryError) result {
	msg := "RequestId: " + awsapi.NewUUID() + " Error: " + ee.msg
	s.emitLog(spec.logGroup, "", msg)
	return result{payload: errorPayload("Runtime.InvalidEntrypoint", msg), functionError: "Unhandled", errorType: "Runtime.InvalidEntrypoint"}
}

// await waits until inv is finished, timing it out at its deadline (or
// after the init timeout when it never started). It returns true when a
// warm process died before it received inv, which may then run elsewhere.
func (s *Service) await(inst *instance, inv *invocation, spec runSpec, cold bool) (retry bool) {
	p := inst.p
	initWait := time.NewTimer(s.opts.InitTimeout + spec.timeout)
	defer initWait.Stop()
	var timeout <-chan time.Time
	started := inv.started
	for {
		select {
		case <-started:
			started = nil
			p.mu.Lock()
			deadline := inv.deadline
			p.mu.Unlock()
			t := time.NewTimer(time.Until(deadline))
			defer t.Stop()
			timeout = t.C
		case <-inv.done:
			return false
		case <-inst.dead:
			return p.died(inv, cold)
		case <-timeout:
			s.timeout(inst, inv, spec)
		case <-initWait.C:
			if started != nil {
				s.timeout(inst, inv, spec)
			}
		}
	}
}

// died settles inv after its process died. wait has failed the
// invocation, unless the process died before it was assigned: then retry
// is true, for a warm process.
func (p *pool) died(inv *invocation, cold bool) (retry bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !inv.finished && inv.startedAt.IsZero() && !cold {
		return true
	}
	if !inv.finished {
		msg := "RequestId: " + inv.id + " Error: Runtime exited without providing a reason"
		inv.finishLocked(result{payload: errorPayload("Runtime.ExitError", msg), functionError: "Unhandled", errorType: "Runtime.ExitError"})
	}
	return false
}

// report collects the result of the finished inv and writes its END and
// REPORT lines.
func (s *Service) report(inst *instance, inv *invocation, spec runSpec, cold bool) result {
	// Let the output the function wrote before answering reach the log.
	inst.out.drain(50 * time.Millisecond)
	inst.p.mu.Lock()
	res := inv.res
	res.logs = inv.logs
	if cold {
		res.initDuration = inst.initDur
	}
	inst.p.mu.Unlock()
	s.emitLog(spec.logGroup, inst.stream, "END RequestId: "+inv.id)
	report := fmt.Sprintf("REPORT RequestId: %s\tDuration: %.2f ms\tBilled Duration: %d ms\tMemory Size: %d MB\tMax Memory Used: %d MB",
		inv.id, float64(res.duration.Microseconds())/1000, int64(res.duration/time.Millisecond)+1, spec.memory, min(spec.memory, 32))
	if cold {
		report += fmt.Sprintf("\tInit Duration: %.2f ms", float64(res.initDuration.Microseconds())/1000)
	}
	if res.errorType != "" && strings.HasPrefix(res.errorType, "Sandbox.") {
		report += "\tStatus: timeout"
	}
	s.emitLog(spec.logGroup, inst.stream, report)
	res.logs = append(res.logs, "END RequestId: "+inv.id, report)
	return res
}

// timeout fails an invocation that ran out of time and kills its process.
func (s *Service) timeout(inst *instance, inv *invocation, spec runSpec) {
	secs := spec.timeout.Seconds()
	msg := fmt.Sprintf("RequestId: %s Error: Task timed out after %.2f seconds", inv.id, secs)
	line := fmt.Sprintf("%s %s Task timed out after %.2f seconds", s.env.Time().UTC().Format("2006-01-02T15:04:05.000Z"), inv.id, secs)
	p := inst.p
	p.mu.Lock()
	inv.logs = append(inv.logs, line)
	ok := inv.finishLocked(result{payload: errorPayload("Sandbox.Timedout", msg), functionError: "Unhandled", errorType: "Sandbox.Timedout"})
	inst.retired = true
	p.mu.Unlock()
	if ok {
		s.emitLog(spec.logGroup, inst.stream, line)
	}
	inst.kill()
}

// emitLog sends a line to the function's log group and the stack logger.
func (s *Service) emitLog(group, stream, line string) {
	s.env.Logger.Debug("lambda log", "group", group, "stream", stream, "message", line)
	if s.opts.Logs == nil || stream == "" {
		return
	}
	if sink := s.opts.Logs(); sink != nil {
		sink.AppendLog(group, stream, s.env.Time(), line)
	}
}
