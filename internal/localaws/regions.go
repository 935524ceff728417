package localaws

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
)

// globalBuilders are the builders whose services serve every Region: IAM
// and STS are global, and S3's bucket names are global (each bucket has its
// own Region, its LocationConstraint).
var globalBuilders = map[string]bool{"iam": true, "s3": true}

// regionName is the form of an AWS Region's name (us-east-1,
// ap-southeast-2, us-gov-west-1). A request signed for anything else (an
// unsigned request, or a scope such as "local") is served by the default
// Region.
var regionName = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d{1,2}$`)

// regions are the Regions a stack serves besides its default one, built on
// first use, and the global services they share.
type regions struct {
	mu     sync.Mutex
	stacks map[string]*Stack
	// built are the default Region's services by builder name, for the
	// global ones other Regions share.
	built  map[string][]awsapi.Service
	closed bool
	// replication carries global tables' writes between the Regions; its
	// down Regions are those POST /_localaws/regions/down took down.
	replication *dynamodb.Replication
}

func newRegions() *regions {
	return &regions{stacks: map[string]*Stack{}, built: map[string][]awsapi.Service{}}
}

// rootStack is the default Region's stack.
func (s *Stack) rootStack() *Stack {
	if s.root != nil {
		return s.root
	}
	return s
}

// Region returns the stack of the Region name (its services, Env and
// Options), building it on first use; "" is the default Region. Every
// Region shares the account, the listener and the global services (IAM,
// STS, S3); each holds its own resources, whose ARNs name it.
func (s *Stack) Region(name string) (*Stack, error) {
	root := s.rootStack()
	if name == "" || name == root.opts.Region {
		return root, nil
	}
	if !regionName.MatchString(name) {
		return nil, fmt.Errorf("%q is not a Region name (such as eu-west-1)", name)
	}
	r := root.regions
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.stacks[name]; ok {
		return st, nil
	}
	if r.closed {
		return nil, errors.New("the stack is closed")
	}
	opts := root.opts
	opts.Region = name
	env := root.env.InRegion(name)
	st := &Stack{opts: opts, env: env, router: awsapi.NewRouter(env), listener: root.listener,
		endpoint: root.endpoint, done: root.done, root: root, regions: r}
	if err := st.buildServices(); err != nil {
		_ = st.closeServices()
		return nil, fmt.Errorf("starting Region %s: %w", name, err)
	}
	r.stacks[name] = st
	return st, nil
}

// global reports whether svc is one of the services every Region shares.
func (r *regions) global(svc awsapi.Service) bool {
	for name := range globalBuilders {
		for _, g := range r.built[name] {
			if g == svc {
				return true
			}
		}
	}
	return false
}

// regionStacks returns the Regions built so far besides the default one,
// and, when closing, stops building more.
func (r *regions) regionStacks(closing bool) []*Stack {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = r.closed || closing
	out := make([]*Stack, 0, len(r.stacks))
	for _, st := range r.stacks {
		out = append(out, st)
	}
	return out
}

// requestRegion is the Region a request is for: its SigV4 credential
// scope's (the Authorization header, or a presigned URL's
// X-Amz-Credential), or the default Region's when it is unsigned or signed
// for no AWS Region.
func requestRegion(r *http.Request) string {
	_, region, _ := awsapi.CredentialScope(r)
	if !regionName.MatchString(region) {
		return ""
	}
	return region
}

// serveHTTP sends a request to the router of its Region. Control routes
// are the default Region's; a Region's own (its services' control routes)
// are reached with ?region=<name>.
func (s *Stack) serveHTTP(w http.ResponseWriter, r *http.Request) {
	region := requestRegion(r)
	if strings.HasPrefix(r.URL.Path, awsapi.ControlPrefix) {
		region = r.URL.Query().Get("region")
	}
	st, err := s.Region(region)
	if err != nil {
		awsapi.WriteControlError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !strings.HasPrefix(r.URL.Path, awsapi.ControlPrefix) && s.regions.replication.Down(st.opts.Region) {
		dropConnection(w)
		return
	}
	st.router.ServeHTTP(w, r)
}

// dropConnection closes a request's connection without an answer, as a
// network partition looks to a client: the SDK sees the connection reset
// and retries, then fails.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// regionDynamoDB is the DynamoDB service of a Region, started when needed.
func (s *Stack) regionDynamoDB(region string) (*dynamodb.Service, error) {
	st, err := s.Region(region)
	if err != nil {
		return nil, err
	}
	return lookupService[*dynamodb.Service](st, "dynamodb")
}

// regionInventory adds the other Regions' resources (their ARNs name
// their Region) to the inventory of GET /_localaws/resources; the global
// services are listed once, by the default Region.
func (s *Stack) regionInventory(out map[string][]string) {
	for _, st := range s.regions.regionStacks(false) {
		for _, svc := range st.router.Services() {
			inv, ok := svc.(awsapi.Inventory)
			if !ok || s.regions.global(svc) {
				continue
			}
			name := svc.Spec().Name
			out[name] = append(out[name], inv.Inventory()...)
			if out[name] == nil {
				out[name] = []string{}
			}
		}
	}
}

// registerRegionControl adds the control routes of Regions and of global
// tables' replication.
func (s *Stack) registerRegionControl() {
	s.router.SetMoreInventory(s.regionInventory)
	c, rep := s.router.Control(), s.regions.replication
	c.HandleFunc("GET regions", func(w http.ResponseWriter, _ *http.Request) {
		names := []string{s.opts.Region}
		for _, st := range s.regions.regionStacks(false) {
			names = append(names, st.opts.Region)
		}
		slices.Sort(names)
		down := []string{}
		for _, n := range names {
			if rep.Down(n) {
				down = append(down, n)
			}
		}
		awsapi.WriteControlJSON(w, http.StatusOK, map[string]any{"default": s.opts.Region, "regions": names, "down": down})
	})
	for _, route := range []struct {
		path string
		down bool
	}{{"regions/down", true}, {"regions/up", false}} {
		c.HandleFunc("POST "+route.path, func(w http.ResponseWriter, r *http.Request) {
			var in struct {
				Region string `json:"region"`
			}
			if err := awsapi.DecodeControlJSON(r, &in); err != nil {
				awsapi.WriteControlError(w, http.StatusBadRequest, err.Error())
				return
			}
			if !regionName.MatchString(in.Region) {
				awsapi.WriteControlError(w, http.StatusBadRequest, fmt.Sprintf("region: %q is not a Region name (such as eu-west-1)", in.Region))
				return
			}
			rep.SetDown(in.Region, route.down)
			awsapi.WriteControlJSON(w, http.StatusOK, map[string]any{"region": in.Region, "down": route.down})
		})
	}
	replication := func(w http.ResponseWriter) {
		awsapi.WriteControlJSON(w, http.StatusOK, map[string]any{"lag": rep.Lag().String(), "pending": rep.Pending()})
	}
	c.HandleFunc("GET dynamodb/replication", func(w http.ResponseWriter, _ *http.Request) { replication(w) })
	c.HandleFunc("POST dynamodb/replication", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Lag string `json:"lag"`
		}
		if err := awsapi.DecodeControlJSON(r, &in); err != nil {
			awsapi.WriteControlError(w, http.StatusBadRequest, err.Error())
			return
		}
		lag, err := time.ParseDuration(in.Lag)
		if err != nil || lag < 0 {
			awsapi.WriteControlError(w, http.StatusBadRequest, fmt.Sprintf("lag: %q is not a duration of 0 or more (such as \"250ms\")", in.Lag))
			return
		}
		rep.SetLag(lag)
		replication(w)
	})
}

// arnRegion is the stack of the Region an ARN names, for deliveries by ARN
// across Regions; s itself for a name, an ARN of no Region or of a Region
// that cannot be served.
func (s *Stack) arnRegion(arn string) *Stack {
	a, err := awsapi.ParseARN(arn)
	if err != nil || a.Region == "" {
		return s
	}
	st, err := s.Region(a.Region)
	if err != nil {
		return s
	}
	return st
}
