package s3

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/xml"
	"net/http"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// lifecycleConfiguration is a BucketLifecycleConfiguration, kept as it was
// put (with the ids S3 gives rules that have none) and returned by
// GetBucketLifecycleConfiguration.
type lifecycleConfiguration struct {
	XMLName xml.Name        `xml:"LifecycleConfiguration"`
	Xmlns   string          `xml:"xmlns,attr,omitempty"`
	Rules   []lifecycleRule `xml:"Rule"`
}

type lifecycleRule struct {
	ID         string               `xml:"ID"`
	Prefix     *string              `xml:"Prefix,omitempty"`
	Filter     *lifecycleFilter     `xml:"Filter,omitempty"`
	Status     string               `xml:"Status"`
	Expiration *lifecycleExpiration `xml:"Expiration,omitempty"`
	// Actions this stack keeps but does not apply: transitions and
	// noncurrent versions (no storage classes, no versioning) and
	// incomplete multipart uploads (no multipart upload).
	Transitions           []innerXML       `xml:"Transition,omitempty"`
	NoncurrentTransitions []innerXML       `xml:"NoncurrentVersionTransition,omitempty"`
	NoncurrentExpiration  *innerXML        `xml:"NoncurrentVersionExpiration,omitempty"`
	AbortIncomplete       *abortIncomplete `xml:"AbortIncompleteMultipartUpload,omitempty"`
}

type abortIncomplete struct {
	DaysAfterInitiation int `xml:"DaysAfterInitiation"`
}

type innerXML struct {
	Inner []byte `xml:",innerxml"`
}

type lifecycleFilter struct {
	Prefix                *string       `xml:"Prefix,omitempty"`
	Tag                   *tag          `xml:"Tag,omitempty"`
	ObjectSizeGreaterThan *int64        `xml:"ObjectSizeGreaterThan,omitempty"`
	ObjectSizeLessThan    *int64        `xml:"ObjectSizeLessThan,omitempty"`
	And                   *lifecycleAnd `xml:"And,omitempty"`
}

type lifecycleAnd struct {
	Prefix                *string `xml:"Prefix,omitempty"`
	Tags                  []tag   `xml:"Tag,omitempty"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan,omitempty"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan,omitempty"`
}

type lifecycleExpiration struct {
	Days                      *int    `xml:"Days,omitempty"`
	Date                      *string `xml:"Date,omitempty"`
	ExpiredObjectDeleteMarker *bool   `xml:"ExpiredObjectDeleteMarker,omitempty"`
}

// transitionMinimum is the header both lifecycle operations answer with:
// the default minimum object size for transitions, which this stack does
// not perform.
const transitionMinimum = "x-amz-transition-default-minimum-object-size"

func (s *Service) putLifecycle(req *awsapi.Request) (any, error) {
	var in lifecycleConfiguration
	if err := readConfig(req, &in); err != nil {
		return nil, err
	}
	if err := checkLifecycle(&in); err != nil {
		return nil, err
	}
	return s.withBucket(req, "s3:PutLifecycleConfiguration", "", func(b *bucket) (any, error) {
		b.lifecycle = &in
		return &awsapi.Raw{Header: s3Header(req, http.Header{transitionMinimum: {"all_storage_classes_128K"}})}, nil
	})
}

// checkLifecycle validates a configuration as PutBucketLifecycleConfiguration
// does and gives rules without an ID one.
func checkLifecycle(c *lifecycleConfiguration) error {
	if len(c.Rules) == 0 || len(c.Rules) > 1000 {
		return errMalformedXML()
	}
	ids := map[string]bool{}
	for i := range c.Rules {
		r := &c.Rules[i]
		if r.ID == "" {
			r.ID = newRuleID()
		}
		switch {
		case len(r.ID) > 255:
			return errInvalidArgument("ID length should not exceed allowed limit of 255")
		case ids[r.ID]:
			return errInvalidArgument("Rule ID must be unique. Found same ID for more than one rule")
		case r.Status != "Enabled" && r.Status != "Disabled":
			return errMalformedXML()
		case r.Prefix != nil && r.Filter != nil:
			return errMalformedXML()
		case r.AbortIncomplete != nil && r.AbortIncomplete.DaysAfterInitiation <= 0:
			return errInvalidArgument("'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer")
		case r.AbortIncomplete != nil && r.Filter != nil && (r.Filter.Tag != nil || (r.Filter.And != nil && len(r.Filter.And.Tags) > 0)):
			return errInvalidRequest("AbortIncompleteMultipartUpload cannot be specified with Tags.")
		case r.Expiration == nil && len(r.Transitions) == 0 && len(r.NoncurrentTransitions) == 0 && r.NoncurrentExpiration == nil && r.AbortIncomplete == nil:
			return errInvalidRequest("At least one action needs to be specified in a rule")
		}
		ids[r.ID] = true
		if err := checkFilter(r.Filter); err != nil {
			return err
		}
		if err := checkExpiration(r.Expiration); err != nil {
			return err
		}
	}
	return nil
}

func checkFilter(f *lifecycleFilter) error {
	if f == nil {
		return nil
	}
	if countSet(f.Prefix != nil, f.Tag != nil, f.ObjectSizeGreaterThan != nil, f.ObjectSizeLessThan != nil, f.And != nil) > 1 {
		return errMalformedXML()
	}
	if f.And != nil {
		if _, err := checkTags(f.And.Tags, maxObjectTags); err != nil {
			return err
		}
	}
	return nil
}

func checkExpiration(e *lifecycleExpiration) error {
	if e == nil {
		return nil
	}
	switch {
	case countSet(e.Days != nil, e.Date != nil, e.ExpiredObjectDeleteMarker != nil) != 1:
		return errMalformedXML()
	case e.Days != nil && *e.Days <= 0:
		return errInvalidArgument("'Days' for Expiration action must be a positive integer")
	case e.Date != nil:
		d, err := time.Parse(time.RFC3339, *e.Date)
		if err != nil {
			return errMalformedXML()
		}
		if !d.UTC().Equal(d.UTC().Truncate(24 * time.Hour)) {
			return errInvalidArgument("'Date' must be at midnight GMT")
		}
	}
	return nil
}

// countSet is how many of the elements a choice allows one of are set.
func countSet(set ...bool) int {
	n := 0
	for _, ok := range set {
		if ok {
			n++
		}
	}
	return n
}

func newRuleID() string {
	b := make([]byte, 30)
	_, _ = rand.Read(b)
	return strings.ToUpper(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))[:48]
}

func (s *Service) getLifecycle(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:GetLifecycleConfiguration", "", func(b *bucket) (any, error) {
		if b.lifecycle == nil {
			return nil, errNotFound("NoSuchLifecycleConfiguration", "The lifecycle configuration does not exist", b.name)
		}
		out := *b.lifecycle
		out.Xmlns = xmlns
		body, err := xml.Marshal(out)
		if err != nil {
			return nil, err
		}
		return &awsapi.Raw{Header: s3Header(req, http.Header{"Content-Type": {"application/xml"}, transitionMinimum: {"all_storage_classes_128K"}}),
			Body: append([]byte(xml.Header), body...)}, nil
	})
}

func (s *Service) deleteLifecycle(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:PutLifecycleConfiguration", "", func(b *bucket) (any, error) {
		b.lifecycle = nil
		return noContent(req), nil
	})
}

// matches reports whether the rule's filter selects o.
func (r *lifecycleRule) matches(o *object) bool {
	if r.Prefix != nil {
		return strings.HasPrefix(o.key, *r.Prefix)
	}
	f := r.Filter
	if f == nil {
		return true
	}
	and := lifecycleAnd{Prefix: f.Prefix, ObjectSizeGreaterThan: f.ObjectSizeGreaterThan, ObjectSizeLessThan: f.ObjectSizeLessThan}
	if f.Tag != nil {
		and.Tags = []tag{*f.Tag}
	}
	if f.And != nil {
		and = *f.And
	}
	size := int64(len(o.data))
	switch {
	case and.Prefix != nil && !strings.HasPrefix(o.key, *and.Prefix):
		return false
	case and.ObjectSizeGreaterThan != nil && size <= *and.ObjectSizeGreaterThan:
		return false
	case and.ObjectSizeLessThan != nil && size >= *and.ObjectSizeLessThan:
		return false
	}
	for _, t := range and.Tags {
		if v, ok := o.tags[t.Key]; !ok || v != t.Value {
			return false
		}
	}
	return true
}

// expiry is when an enabled rule expires o: its Date, or the midnight UTC
// that follows o's creation plus Days, as S3 computes it.
func (r *lifecycleRule) expiry(o *object) (time.Time, bool) {
	e := r.Expiration
	if r.Status != "Enabled" || e == nil || !r.matches(o) {
		return time.Time{}, false
	}
	if e.Date != nil {
		d, err := time.Parse(time.RFC3339, *e.Date)
		return d.UTC(), err == nil
	}
	if e.Days == nil {
		return time.Time{}, false
	}
	return nextMidnight(o.modified, *e.Days), true
}

// nextMidnight is the midnight UTC at or after t plus days.
func nextMidnight(t time.Time, days int) time.Time {
	t = t.UTC().Add(time.Duration(days) * 24 * time.Hour)
	midnight := t.Truncate(24 * time.Hour)
	if midnight.Before(t) {
		midnight = midnight.Add(24 * time.Hour)
	}
	return midnight
}

// abortsAt is when an enabled rule aborts the incomplete upload u.
func (r *lifecycleRule) abortsAt(u *upload) (time.Time, bool) {
	if r.Status != "Enabled" || r.AbortIncomplete == nil || !r.matches(u.object) {
		return time.Time{}, false
	}
	return nextMidnight(u.initiated, r.AbortIncomplete.DaysAfterInitiation), true
}

// expiration is the earliest expiry of o by the bucket's rules and the id
// of that rule.
func (b *bucket) expiration(o *object) (time.Time, string, bool) {
	var at time.Time
	var id string
	if b.lifecycle == nil {
		return at, id, false
	}
	for i := range b.lifecycle.Rules {
		r := &b.lifecycle.Rules[i]
		if t, ok := r.expiry(o); ok && (id == "" || t.Before(at)) {
			at, id = t, r.ID
		}
	}
	return at, id, id != ""
}

// writeExpiration sets x-amz-expiration when a rule expires o.
func (s *Service) writeExpiration(h http.Header, b *bucket, o *object) {
	if at, id, ok := b.expiration(o); ok {
		h.Set("x-amz-expiration", `expiry-date="`+httpTime(at)+`", rule-id="`+id+`"`)
	}
}

func (s *Service) sweepLoop() {
	t := time.NewTicker(s.opts.LifecycleSweepInterval)
	defer t.Stop()
	for {
		select {
		case <-s.Context().Done():
			return
		case <-t.C:
			s.SweepLifecycle()
		}
	}
}

// SweepLifecycle deletes, now, every object whose lifecycle expiration
// has come on the stack's clock and aborts the incomplete multipart
// uploads whose rules say so; it returns how many objects it deleted.
func (s *Service) SweepLifecycle() int {
	now := s.env.Time()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, b := range s.buckets {
		for key, o := range b.objects {
			if at, _, ok := b.expiration(o); ok && !now.Before(at) {
				delete(b.objects, key)
				n++
			}
		}
		if b.lifecycle == nil {
			continue
		}
		for id, u := range b.uploads {
			for i := range b.lifecycle.Rules {
				if at, ok := b.lifecycle.Rules[i].abortsAt(u); ok && !now.Before(at) {
					delete(b.uploads, id)
					break
				}
			}
		}
	}
	return n
}
