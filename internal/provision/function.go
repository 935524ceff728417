package provision

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

// Environment returns the relay's environment variables (package
// internal/relay/config) for the pipeline. ttlAttribute is the table's TTL
// attribute as found (an adopted table keeps its own); empty means the
// Spec's. Both functions get the same environment: one binary serves stream
// batches and reconcile payloads.
func (s Spec) Environment(ttlAttribute string) map[string]string {
	s = s.WithDefaults()
	t := s.OutboxTable()
	ttlAttribute = cmp.Or(ttlAttribute, t.TTLAttribute)
	env := map[string]string{
		config.EnvTableName:        t.Name,
		config.EnvPartitionKey:     t.PartitionKey,
		config.EnvSortKey:          t.SortKey,
		config.EnvSortKeyPrefix:    t.SortKeyPrefix,
		config.EnvTTLAttribute:     ttlAttribute,
		config.EnvPendingIndexName: t.PendingIndexName,
		config.EnvPendingShards:    strconv.Itoa(t.PendingShards),
		config.EnvPublishedAction:  string(s.PublishedAction),
		config.EnvPublishedTTL:     s.PublishedTTL.String(),
		config.EnvReconcileMinAge:  s.Reconciler.MinAge.String(),
	}
	if s.Table.PendingIndexDisabled {
		env[config.EnvPendingIndexEnabled] = "false"
	}
	env[config.EnvReconcileMaxWorkers] = strconv.Itoa(int(s.Reconciler.MaxWorkers))
	if s.Reconciler.MaxEventsPerSecond > 0 {
		env[config.EnvReconcileMaxEventsPerSecond] = strconv.Itoa(int(s.Reconciler.MaxEventsPerSecond))
	}
	if s.Ordered {
		env[config.EnvOrdered] = "true"
	}
	maps.Copy(env, s.Target.Env())
	maps.Copy(env, s.claimEnvironment())
	maps.Copy(env, s.MultiRegion.environment())
	return env
}

// functionSpec is one function of the pipeline.
type functionSpec struct {
	what     string // "relay function", for errors
	name     string
	roleARN  string
	config   FunctionSpec
	arch     Architecture
	env      map[string]string
	controls LambdaControls
	tags     map[string]string
	zip      []byte
	sha      string
}

// getFunction returns the function, or a NotFoundError when it does not
// exist.
func (c *Provisioner) getFunction(ctx context.Context, name string) (*lambda.GetFunctionOutput, error) {
	out, err := c.Lambda.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name)})
	if err != nil {
		return nil, awsops.NotFound("function", name, err)
	}
	return out, nil
}

func (c *Provisioner) ensureFunction(ctx context.Context, f functionSpec, known bool) (string, error) {
	have, err := c.getFunction(ctx, f.name)
	absent := errors.Is(err, awsops.ErrNotFound)
	if err != nil && !absent {
		return "", fmt.Errorf("reading %s (%s): %w", f.what, f.name, err)
	}
	var arn string
	switch {
	case absent:
		tracing, logging, kms, vpc := f.controls.requests()
		in := &lambda.CreateFunctionInput{
			TracingConfig: tracing, LoggingConfig: logging, VpcConfig: vpc,
			FunctionName:  aws.String(f.name),
			Role:          aws.String(f.roleARN),
			Runtime:       types.Runtime(Runtime),
			Handler:       aws.String(Handler),
			Architectures: []types.Architecture{types.Architecture(f.arch)},
			MemorySize:    aws.Int32(f.config.MemorySize),
			Timeout:       aws.Int32(f.config.Timeout),
			Code:          &types.FunctionCode{ZipFile: f.zip},
			Environment:   &types.Environment{Variables: f.env},
			Description:   aws.String("Outbox pipeline " + f.what),
			Tags:          f.tags,
		}
		if aws.ToString(kms) != "" {
			in.KMSKeyArn = kms
		}
		var out *lambda.CreateFunctionOutput
		err := c.retryPropagation(ctx, func() (err error) {
			out, err = c.Lambda.CreateFunction(ctx, in)
			return err
		})
		if err != nil {
			return "", fmt.Errorf("creating %s (%s): %w", f.what, f.name, err)
		}
		arn = aws.ToString(out.FunctionArn)
		if err := c.waitFunctionReady(ctx, f.name); err != nil {
			return arn, fmt.Errorf("creating %s (%s): %w", f.what, f.name, err)
		}
	case !known:
		return "", fmt.Errorf("creating %s (%s): a function of that name already exists: delete it or choose another pipeline name", f.what, f.name)
	default:
		arn = aws.ToString(have.Configuration.FunctionArn)
		if err := c.updateFunction(ctx, f, have); err != nil {
			return arn, fmt.Errorf("updating %s (%s): %w", f.what, f.name, err)
		}
	}
	if err := c.ensureConcurrency(ctx, f, have); err != nil {
		return arn, fmt.Errorf("setting the reserved concurrency of %s (%s): %w", f.what, f.name, err)
	}
	return arn, nil
}

// functionDiff lists what differs between the function and its spec.
func functionDiff(f functionSpec, have *lambda.GetFunctionOutput) (config, code []string) {
	cfg := have.Configuration
	var env map[string]string
	if cfg.Environment != nil {
		env = cfg.Environment.Variables
	}
	if aws.ToString(cfg.Role) != f.roleARN {
		config = append(config, "role")
	}
	if string(cfg.Runtime) != Runtime {
		config = append(config, "runtime")
	}
	if aws.ToString(cfg.Handler) != Handler {
		config = append(config, "handler")
	}
	if aws.ToInt32(cfg.MemorySize) != f.config.MemorySize {
		config = append(config, "memory_size")
	}
	if aws.ToInt32(cfg.Timeout) != f.config.Timeout {
		config = append(config, "timeout")
	}
	if !maps.Equal(env, f.env) {
		config = append(config, "environment")
	}
	config = append(config, controlsDiff(f.controls, cfg)...)
	if aws.ToString(cfg.CodeSha256) != f.sha {
		code = append(code, "code")
	}
	if len(cfg.Architectures) != 1 || string(cfg.Architectures[0]) != string(f.arch) {
		code = append(code, "architecture")
	}
	return config, code
}

func (c *Provisioner) updateFunction(ctx context.Context, f functionSpec, have *lambda.GetFunctionOutput) error {
	cfgDiff, codeDiff := functionDiff(f, have)
	if len(cfgDiff) > 0 {
		tracing, logging, kms, vpc := f.controls.requests()
		in := &lambda.UpdateFunctionConfigurationInput{
			TracingConfig: tracing, LoggingConfig: logging, KMSKeyArn: kms, VpcConfig: vpc,
			FunctionName: aws.String(f.name),
			Role:         aws.String(f.roleARN),
			Runtime:      types.Runtime(Runtime),
			Handler:      aws.String(Handler),
			MemorySize:   aws.Int32(f.config.MemorySize),
			Timeout:      aws.Int32(f.config.Timeout),
			Environment:  &types.Environment{Variables: f.env},
		}
		err := c.retryPropagation(ctx, func() error {
			_, err := c.Lambda.UpdateFunctionConfiguration(ctx, in)
			return err
		})
		if err != nil {
			return fmt.Errorf("configuration (%v): %w", cfgDiff, err)
		}
		if err := c.waitFunctionReady(ctx, f.name); err != nil {
			return err
		}
	}
	if len(codeDiff) > 0 {
		_, err := c.Lambda.UpdateFunctionCode(ctx, &lambda.UpdateFunctionCodeInput{
			FunctionName:  aws.String(f.name),
			ZipFile:       f.zip,
			Architectures: []types.Architecture{types.Architecture(f.arch)},
		})
		if err != nil {
			return fmt.Errorf("code (%v): %w", codeDiff, err)
		}
		if err := c.waitFunctionReady(ctx, f.name); err != nil {
			return err
		}
	}
	return c.syncFunctionTags(ctx, aws.ToString(have.Configuration.FunctionArn), have.Tags, f.tags)
}

func (c *Provisioner) ensureConcurrency(ctx context.Context, f functionSpec, have *lambda.GetFunctionOutput) error {
	var current *int32
	if have != nil && have.Concurrency != nil {
		current = have.Concurrency.ReservedConcurrentExecutions
	}
	switch want := f.config.ReservedConcurrency; {
	case want == nil && current != nil:
		_, err := c.Lambda.DeleteFunctionConcurrency(ctx, &lambda.DeleteFunctionConcurrencyInput{FunctionName: aws.String(f.name)})
		return err
	case want != nil && (current == nil || *current != *want):
		_, err := c.Lambda.PutFunctionConcurrency(ctx, &lambda.PutFunctionConcurrencyInput{FunctionName: aws.String(f.name), ReservedConcurrentExecutions: want})
		return err
	}
	return nil
}

// waitFunctionReady waits until the function is Active and its last update
// Successful.
func (c *Provisioner) waitFunctionReady(ctx context.Context, name string) error {
	return c.waitFor(ctx, "function "+name+" to be active", func(ctx context.Context) (bool, error) {
		cfg, err := c.Lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(name)})
		if err != nil {
			return false, err
		}
		switch {
		case cfg.State == types.StateFailed:
			return false, fmt.Errorf("the function failed: %s: %s", cfg.StateReasonCode, aws.ToString(cfg.StateReason))
		case cfg.LastUpdateStatus == types.LastUpdateStatusFailed:
			return false, fmt.Errorf("the update failed: %s: %s", cfg.LastUpdateStatusReasonCode, aws.ToString(cfg.LastUpdateStatusReason))
		}
		return (cfg.State == "" || cfg.State == types.StateActive) &&
			(cfg.LastUpdateStatus == "" || cfg.LastUpdateStatus == types.LastUpdateStatusSuccessful), nil
	})
}

func (c *Provisioner) syncFunctionTags(ctx context.Context, arn string, have, want map[string]string) error {
	return awsops.SyncTags(ctx, have, want, func(ctx context.Context, keys []string) error {
		_, err := c.Lambda.UntagResource(ctx, &lambda.UntagResourceInput{Resource: aws.String(arn), TagKeys: keys})
		return err
	}, func(ctx context.Context, set map[string]string) error {
		_, err := c.Lambda.TagResource(ctx, &lambda.TagResourceInput{Resource: aws.String(arn), Tags: set})
		return err
	})
}

func (c *Provisioner) deleteFunction(ctx context.Context, what, name string) error {
	return awsops.Delete(ctx, what, name, func(ctx context.Context, name string) error {
		_, err := c.Lambda.DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(name)})
		return err
	})
}

// functionDef is a function of the pipeline as a component. Lookup finds
// the functions first (see Lookup); the component records what it found.
type functionDef struct {
	name       string // the component
	reconciler bool
	function   func(Names) string
	config     func(*Spec) *FunctionSpec
	role       func(State) string // the ARN of its role
	fields     func(*State) (name, arn *string)
	tags       func(Spec, State) map[string]string
	// recordsCode is true for the function whose code Read reports as
	// State.RelayPackageSHA256.
	recordsCode bool
}

func (f functionDef) spec(p *pass) functionSpec {
	return functionSpec{
		what: described(f.name), name: f.function(p.names()), roleARN: f.role(*p.st), config: *f.config(&p.s),
		arch: p.s.Architecture, env: p.s.environment(*p.st), controls: p.s.Controls,
	}
}

func (f functionDef) component() componentDef {
	return componentDef{
		Name: f.name, Wanted: reconcilerOnly(f.reconciler), Required: f.reconciler,
		Recorded: func(st State) bool { name, _ := f.fields(&st); return *name != "" },
		Ensure: func(c *Provisioner, ctx context.Context, p *pass) error {
			name, arn := f.fields(p.st)
			spec := f.spec(p)
			spec.tags, spec.zip, spec.sha = f.tags(p.s, *p.st), p.zip, p.sha
			got, err := c.ensureFunction(ctx, spec, *name != "")
			if got != "" {
				*name, *arn = spec.name, got
			}
			return err
		},
		Read: func(c *Provisioner, ctx context.Context, p *pass) error {
			name, arn := f.fields(p.st)
			if *name == "" {
				return nil
			}
			spec := f.spec(p)
			spec.sha = p.st.RelayPackageSHA256
			sha, err := c.readFunction(ctx, f.name, name, arn, spec, p.d)
			if err == nil && f.recordsCode {
				p.st.RelayPackageSHA256 = sha
			}
			return err
		},
		Remove: func(c *Provisioner, ctx context.Context, st *State) error {
			name, arn := f.fields(st)
			if err := c.deleteFunction(ctx, described(f.name), *name); err != nil {
				return err
			}
			*name, *arn = "", ""
			return nil
		},
		Lookup: func(_ *Provisioner, _ context.Context, p *pass) error {
			out := p.functions[f.name]
			if out == nil {
				return nil
			}
			name, arn := f.fields(p.st)
			*name, *arn = f.function(p.names()), aws.ToString(out.Configuration.FunctionArn)
			cfg := f.config(&p.s)
			cfg.MemorySize, cfg.Timeout = aws.ToInt32(out.Configuration.MemorySize), aws.ToInt32(out.Configuration.Timeout)
			if out.Concurrency != nil {
				cfg.ReservedConcurrency = out.Concurrency.ReservedConcurrentExecutions
			}
			return nil
		},
	}
}

// readFunction records drift of a function and returns its code's SHA-256.
func (c *Provisioner) readFunction(ctx context.Context, component string, name, arn *string, f functionSpec, d *Drift) (string, error) {
	have, err := c.getFunction(ctx, *name)
	if errors.Is(err, awsops.ErrNotFound) {
		d.AddMissing(component)
		*name, *arn = "", ""
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading function (%s): %w", *name, err)
	}
	*arn = aws.ToString(have.Configuration.FunctionArn)
	sha := aws.ToString(have.Configuration.CodeSha256)
	f.sha = sha // code changes are reported through RelayPackageSHA256
	cfg, code := functionDiff(f, have)
	fields := append(cfg, code...)
	var current *int32
	if have.Concurrency != nil {
		current = have.Concurrency.ReservedConcurrentExecutions
	}
	if want := f.config.ReservedConcurrency; (want == nil) != (current == nil) || (want != nil && *want != *current) {
		fields = append(fields, "reserved_concurrency")
	}
	d.AddChanged(component, fields...)
	return sha, nil
}

// functionTags returns the function's tags without those the pipeline
// manages.
func functionTags(out *lambda.GetFunctionOutput) map[string]string {
	tags := maps.Clone(out.Tags)
	for k := range tags {
		if strings.HasPrefix(k, "outbox:") {
			delete(tags, k)
		}
	}
	return tags
}

func relaySpec(s *Spec) *FunctionSpec { return &s.Relay }

func reconcilerSpec(s *Spec) *FunctionSpec { return &s.Reconciler.Function }

// relayFunctionTags are the relay function's tags: on an adopted table,
// they record what the pipeline added to it.
func relayFunctionTags(s Spec, st State) map[string]string {
	tags := s.tags()
	if added := st.Added.tag(); added != "" {
		tags[TagAdded] = added
	}
	return tags
}

func (n Names) relayFunction() string { return n.RelayFunction }

func (n Names) reconcilerFunction() string { return n.ReconcilerFunction }
