package awsapi

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// ControlPrefix is the path prefix of the stack's control API.
const ControlPrefix = "/_localaws/"

// MaxBodyBytes bounds request bodies.
const MaxBodyBytes = 64 << 20

// Router dispatches HTTP requests to services the way AWS routes them:
// X-Amz-Target prefix first (and the rpcv2Cbor /service/<name>/operation/<op>
// path), then the SigV4 credential scope's service, then the URL path.
type Router struct {
	env     *Env
	control *Control

	mu        sync.RWMutex
	more      func(out map[string][]string)
	services  []Service
	byName    map[string]Service
	byTarget  map[string]Service
	bySigning map[string]Service
}

// NewRouter returns a router with the built-in control routes (faults,
// resources, health).
func NewRouter(env *Env) *Router {
	r := &Router{
		env:       env,
		byName:    map[string]Service{},
		byTarget:  map[string]Service{},
		bySigning: map[string]Service{},
	}
	r.control = newControl(r)
	return r
}

// Env returns the router's environment.
func (r *Router) Env() *Env { return r.env }

// Control returns the control route registry.
func (r *Router) Control() *Control { return r.control }

// Register adds a service. Its name and target prefix must be unique; the
// first service registered for a signing name is the one routed to by
// credential scope. A ControlRegistrar gets its control routes registered.
func (r *Router) Register(s Service) error {
	spec := s.Spec()
	if spec.Name == "" || spec.Protocol == 0 {
		return fmt.Errorf("registering service: spec needs Name and Protocol: %+v", spec)
	}
	r.mu.Lock()
	if _, dup := r.byName[spec.Name]; dup {
		r.mu.Unlock()
		return fmt.Errorf("registering service %s: already registered", spec.Name)
	}
	if spec.TargetPrefix != "" {
		if _, dup := r.byTarget[spec.TargetPrefix]; dup {
			r.mu.Unlock()
			return fmt.Errorf("registering service %s: target prefix %s already registered", spec.Name, spec.TargetPrefix)
		}
		r.byTarget[spec.TargetPrefix] = s
	}
	if spec.SigningName != "" {
		if _, dup := r.bySigning[spec.SigningName]; !dup {
			r.bySigning[spec.SigningName] = s
		}
	}
	r.byName[spec.Name] = s
	r.services = append(r.services, s)
	r.mu.Unlock()
	if cr, ok := s.(ControlRegistrar); ok {
		cr.RegisterControl(r.control)
	}
	return nil
}

// Service returns a registered service by name.
func (r *Router) Service(name string) (Service, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.byName[name]
	return s, ok
}

// Services returns the registered services in registration order.
func (r *Router) Services() []Service {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]Service(nil), r.services...)
}

// Inventory lists what each service implementing Inventory holds, by
// service name, sorted, with what SetMoreInventory adds.
func (r *Router) Inventory() map[string][]string {
	out := map[string][]string{}
	for _, s := range r.Services() {
		if inv, ok := s.(Inventory); ok {
			items := inv.Inventory()
			if items == nil {
				items = []string{}
			}
			out[s.Spec().Name] = items
		}
	}
	r.mu.RLock()
	more := r.more
	r.mu.RUnlock()
	if more != nil {
		more(out)
	}
	for _, items := range out {
		sort.Strings(items)
	}
	return out
}

// SetMoreInventory has Inventory add, by service name, what the router's
// own services do not hold (the other Regions' resources).
func (r *Router) SetMoreInventory(more func(out map[string][]string)) {
	r.mu.Lock()
	r.more = more
	r.mu.Unlock()
}

// resolve finds the service and operation of a request and the wire
// protocol it speaks. When no service matches it returns a nil service and
// the spec to write the error with.
func (r *Router) resolve(req *http.Request, signing string) (Service, string, Spec) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if target := req.Header.Get("X-Amz-Target"); target != "" {
		prefix, op := target, ""
		if i := strings.LastIndex(target, "."); i >= 0 {
			prefix, op = target[:i], target[i+1:]
		}
		proto := JSON10
		if strings.HasSuffix(req.Header.Get("Content-Type"), "1.1") {
			proto = JSON11
		}
		if s, ok := r.byTarget[prefix]; ok {
			return s, op, wireSpec(s.Spec(), proto)
		}
		return nil, op, Spec{Name: "unknown", Protocol: proto}
	}
	if rest, ok := strings.CutPrefix(req.URL.Path, "/service/"); ok {
		if name, op, ok := strings.Cut(rest, "/operation/"); ok {
			if s, ok := r.byTarget[name]; ok {
				return s, op, wireSpec(s.Spec(), RPCv2CBOR)
			}
			return nil, op, Spec{Name: "unknown", Protocol: RPCv2CBOR}
		}
	}
	form := strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded")
	if s, ok := r.bySigning[signing]; ok {
		if form {
			return s, "", wireSpec(s.Spec(), Query)
		}
		return s, "", s.Spec()
	}
	for _, s := range r.services {
		for _, p := range s.Spec().PathPrefixes {
			if strings.HasPrefix(req.URL.Path, p) {
				return s, "", s.Spec()
			}
		}
	}
	proto := RESTJSON
	if form {
		proto = Query
	}
	return nil, "", Spec{Name: "unknown", Protocol: proto}
}

// wireSpec is spec as written in wire protocol p, when the service answers
// in it; otherwise spec itself.
func wireSpec(spec Spec, p Protocol) Spec {
	if p != spec.Protocol && spec.accepts(p) {
		spec.Protocol = p
	}
	return spec
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// ServeHTTP implements http.Handler.
func (r *Router) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	if strings.HasPrefix(hr.URL.Path, ControlPrefix) {
		r.control.ServeHTTP(w, hr)
		return
	}
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	req := &Request{
		RequestID: NewRequestID(),
		Region:    r.env.Region,
		AccountID: r.env.AccountID,
		HTTP:      hr,
		Env:       r.env,
		Received:  r.env.Time(),
	}
	akid, _, signing := CredentialScope(hr)
	svc, op, spec := r.resolve(hr, signing)
	req.Service, req.Protocol, req.Wire = spec.Name, spec.Protocol, spec.Protocol
	if svc != nil {
		req.Protocol = svc.Spec().Protocol
	}
	defer func() {
		r.env.Logger.LogAttrs(hr.Context(), slog.LevelInfo, "request",
			slog.String("service", req.Service),
			slog.String("operation", req.Operation),
			slog.Int("status", sw.status),
			slog.Duration("duration", time.Since(start)),
			slog.String("requestId", req.RequestID))
	}()

	body, err := readBody(hr, spec)
	if err != nil {
		WriteError(sw, spec, req.RequestID, SerializationException("reading body: %v", err))
		return
	}
	req.Body = body

	if e := decode(svc, spec, req, op); e != nil {
		WriteError(sw, spec, req.RequestID, e)
		return
	}
	op = req.Operation

	p, perr := r.env.Credentials.Resolve(akid)
	if perr != nil {
		WriteError(sw, spec, req.RequestID, perr)
		return
	}
	req.Principal = p

	if latency, ferr := r.env.Faults.Request(spec.Name, op); latency > 0 || ferr != nil {
		if latency > 0 && !Sleep(hr.Context(), latency) {
			return
		}
		if ferr != nil {
			WriteError(sw, spec, req.RequestID, ferr)
			return
		}
	}

	out, herr := r.call(svc, req)
	if herr != nil {
		WriteError(sw, spec, req.RequestID, AsError(herr))
		return
	}
	WriteResult(sw, spec, req, out)
}

// decode names the request's operation (op, when the route named it) and
// turns its body into the form the service reads.
func decode(svc Service, spec Spec, req *Request, op string) *Error {
	switch {
	case spec.Protocol == Query:
		op = req.Form().Get("Action")
	case op == "" && svc != nil:
		if res, ok := svc.(OperationResolver); ok {
			op = res.ResolveOperation(req.HTTP)
		}
	}
	req.Operation = op
	if svc == nil || op == "" {
		return unknownOperation(spec.Protocol, op)
	}
	if req.Wire == req.Protocol {
		return nil
	}
	shapes, ok := svc.Spec().Shapes[op]
	if !ok {
		return unknownOperation(spec.Protocol, op)
	}
	var form url.Values
	if req.Wire == Query {
		form = req.Form()
	}
	body, err := transcodeRequest(req.Wire, req.Body, form, shapes.Input)
	if err != nil {
		return AsError(err)
	}
	req.Body = body
	return nil
}

func (r *Router) call(svc Service, req *Request) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.env.Logger.Error("handler panic", "service", req.Service, "operation", req.Operation, "panic", p)
			out, err = nil, InternalFailure("internal error: %v", p)
		}
	}()
	return svc.Handle(req)
}

func unknownOperation(p Protocol, op string) *Error {
	if p == Query {
		if op == "" {
			return NewError("MissingAction", "Missing Action")
		}
		return InvalidAction(op)
	}
	return UnknownOperationException(op)
}

// readBody reads a request's body, decompressing it when the SDK
// compressed it (Content-Encoding gzip: the request compression of
// CloudWatch PutMetricData) for a protocol whose body is the request
// itself; a REST body with Content-Encoding is the resource's (an S3
// object), kept as sent.
func readBody(hr *http.Request, spec Spec) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, MaxBodyBytes))
	if err != nil || spec.Protocol == RESTJSON || spec.Protocol == RESTXML || !gzipped(hr.Header.Get("Content-Encoding")) {
		return body, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(zr, MaxBodyBytes))
}

// gzipped reports whether a Content-Encoding lists gzip.
func gzipped(encoding string) bool {
	return slices.ContainsFunc(strings.Split(encoding, ","), func(e string) bool { return strings.TrimSpace(e) == "gzip" })
}
