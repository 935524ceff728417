// Package logging gives the relay a log/slog JSON logger that adds the Lambda
// request id to every record logged with a context.
package logging

import (
	"context"
	"io"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// KeyRequestID is the attribute that carries the Lambda request id.
const KeyRequestID = "requestId"

// New returns a JSON logger writing to w at the given level.
func New(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(NewHandler(w, level))
}

// NewHandler returns a JSON handler writing to w that adds the request id.
func NewHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return requestIDHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})}
}

// OrDiscard returns logger, or a logger that discards every record when
// logger is nil.
func OrDiscard(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return logger
}

// ParseLevel reads a level name (DEBUG, INFO, WARN, ERROR, as Lambda's
// AWS_LAMBDA_LOG_LEVEL uses; TRACE and FATAL are mapped to the nearest);
// anything else gives INFO.
func ParseLevel(s string) slog.Level {
	switch s {
	case "TRACE", "DEBUG", "trace", "debug":
		return slog.LevelDebug
	case "WARN", "warn":
		return slog.LevelWarn
	case "ERROR", "FATAL", "error", "fatal":
		return slog.LevelError
	}
	return slog.LevelInfo
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		r.AddAttrs(slog.String(KeyRequestID, lc.AwsRequestID))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
