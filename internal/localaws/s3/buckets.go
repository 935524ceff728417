package s3

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// bucket is one general purpose bucket.
type bucket struct {
	name, region string
	created      time.Time
	objects      map[string]*object
	tags         map[string]string // nil: no tag set
	policy       string
	publicAccess *publicAccessBlock
	encryption   *encryptionConfiguration
	lifecycle    *lifecycleConfiguration
	uploads      map[string]*upload // multipart uploads in progress, by id
}

func (b *bucket) arn() string { return bucketArn(b.name) }

// bucketArn is the ARN of the bucket name: bucket ARNs have no region or
// account.
func bucketArn(name string) string { return "arn:aws:s3:::" + name }

// validBucketName follows the naming rules of general purpose buckets
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
var (
	bucketNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	ipAddressRE  = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)
)

func validBucketName(name string) bool {
	if !bucketNameRE.MatchString(name) || ipAddressRE.MatchString(name) || strings.Contains(name, "..") ||
		strings.Contains(name, ".-") || strings.Contains(name, "-.") {
		return false
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	for _, suf := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, suf) {
			return false
		}
	}
	return true
}

type createBucketConfiguration struct {
	LocationConstraint string `xml:"LocationConstraint"`
}

// createBucket applies CreateBucket's LocationConstraint rules: in
// us-east-1 (whose endpoint is the global one) the constraint may name any
// other Region, and naming us-east-1 itself is InvalidLocationConstraint;
// elsewhere it must name the Region of the endpoint.
func (s *Service) createBucket(req *awsapi.Request) (any, error) {
	name := bucketName(req)
	if !validBucketName(name) {
		return nil, awsapi.NewError("InvalidBucketName", "The specified bucket is not valid.").With("BucketName", name)
	}
	var cfg createBucketConfiguration
	if len(req.Body) > 0 {
		if err := xml.Unmarshal(req.Body, &cfg); err != nil {
			return nil, errMalformedXML()
		}
	}
	region, err := bucketRegion(req.Region, cfg.LocationConstraint)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(req, nil, "s3:CreateBucket", bucketArn(name)); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.buckets[name]; ok {
		if b.region == "us-east-1" && req.Region == "us-east-1" {
			return &awsapi.Raw{Header: s3Header(req, http.Header{"Location": {"/" + name}})}, nil
		}
		return nil, awsapi.NewError("BucketAlreadyOwnedByYou", "Your previous request to create the named bucket succeeded and you already own it.").
			WithStatus(http.StatusConflict).With("BucketName", name)
	}
	s.buckets[name] = &bucket{name: name, region: region, created: s.env.Time().UTC(), objects: map[string]*object{}, publicAccess: defaultPublicAccessBlock()}
	return &awsapi.Raw{Header: s3Header(req, http.Header{"Location": {"/" + name}})}, nil
}

var regionRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d$`)

// bucketRegion is the Region of a bucket created with constraint through
// the endpoint of the Region here.
func bucketRegion(here, constraint string) (string, error) {
	switch {
	case constraint == "" && here == "us-east-1":
		return here, nil
	case constraint == "":
		return "", awsapi.NewError("IllegalLocationConstraintException",
			"The unspecified location constraint is incompatible for the region specific endpoint this request was sent to.")
	case constraint == "us-east-1" || (constraint != "EU" && !regionRE.MatchString(constraint)):
		return "", awsapi.NewError("InvalidLocationConstraint", "The specified location-constraint is not valid").With("LocationConstraint", constraint)
	case constraint == "EU":
		constraint = "eu-west-1"
	}
	if here != "us-east-1" && constraint != here {
		return "", awsapi.NewError("IllegalLocationConstraintException",
			"The %s location constraint is incompatible for the region specific endpoint this request was sent to.", constraint)
	}
	return constraint, nil
}

// s3Header adds the request id headers S3 sends to h.
func s3Header(req *awsapi.Request, h http.Header) http.Header {
	if h == nil {
		h = http.Header{}
	}
	h.Set("x-amz-request-id", req.RequestID)
	h.Set("x-amz-id-2", req.RequestID)
	return h
}

// withBucket runs fn with the request's bucket under the service's lock,
// once the caller is authorised for action on resource (the bucket's ARN,
// or with a key, the object's); an empty action leaves authorisation to
// fn.
func (s *Service) withBucket(req *awsapi.Request, action, key string, fn func(b *bucket) (any, error)) (any, error) {
	name := bucketName(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[name]
	if !ok {
		return nil, errNoSuchBucket(name)
	}
	if owner := req.HTTP.Header.Get("x-amz-expected-bucket-owner"); owner != "" && owner != s.env.AccountID {
		return nil, errAccessDenied("Access Denied")
	}
	resource := b.arn()
	if key != "" {
		resource += "/" + key
	}
	if action != "" {
		if err := s.authorize(req, b, action, resource); err != nil {
			return nil, err
		}
	}
	return fn(b)
}

func (s *Service) headBucket(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:ListBucket", "", func(b *bucket) (any, error) {
		return &awsapi.Raw{Header: s3Header(req, http.Header{"x-amz-bucket-region": {b.region}})}, nil
	})
}

func (s *Service) deleteBucket(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:DeleteBucket", "", func(b *bucket) (any, error) {
		if len(b.objects) > 0 {
			return nil, awsapi.NewError("BucketNotEmpty", "The bucket you tried to delete is not empty").
				WithStatus(http.StatusConflict).With("BucketName", b.name)
		}
		delete(s.buckets, b.name)
		return noContent(req), nil
	})
}

func noContent(req *awsapi.Request) *awsapi.Raw {
	return &awsapi.Raw{Status: http.StatusNoContent, Header: s3Header(req, nil)}
}

type listBucketsResult struct {
	XMLName           xml.Name      `xml:"ListAllMyBucketsResult"`
	Xmlns             string        `xml:"xmlns,attr"`
	Owner             owner         `xml:"Owner"`
	Buckets           []bucketEntry `xml:"Buckets>Bucket"`
	Prefix            string        `xml:"Prefix,omitempty"`
	ContinuationToken string        `xml:"ContinuationToken,omitempty"`
}

type owner struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName,omitempty"`
}

type bucketEntry struct {
	Name         string `xml:"Name"`
	CreationDate string `xml:"CreationDate"`
	BucketRegion string `xml:"BucketRegion"`
}

// owner is the account's owner entry: its canonical user id, an opaque
// 64-digit hex string (here derived from the account id).
func (s *Service) owner() owner {
	sum := sha256.Sum256([]byte("canonical-user:" + s.env.AccountID))
	return owner{ID: hex.EncodeToString(sum[:])}
}

// listBuckets lists the buckets in name order, filtered by prefix and
// bucket-region, max-buckets at a time (10,000 when filtered or continued,
// as AWS pages); the continuation token is the last name listed, encoded.
func (s *Service) listBuckets(req *awsapi.Request) (any, error) {
	if err := s.authorize(req, nil, "s3:ListAllMyBuckets", "*"); err != nil {
		return nil, err
	}
	q := req.Query()
	limit, ok := awsapi.IntParam(q, "max-buckets", 10000, 1, 10000)
	if !ok {
		return nil, errInvalidArgument("Argument max-buckets must be an integer between 1 and 10000")
	}
	after := ""
	if tok := q.Get("continuation-token"); tok != "" {
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return nil, errInvalidArgument("The continuation token provided is incorrect")
		}
		after = string(raw)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := listBucketsResult{Xmlns: xmlns, Owner: s.owner(), Buckets: []bucketEntry{}, Prefix: q.Get("prefix")}
	for _, name := range slices.Sorted(maps.Keys(s.buckets)) {
		b := s.buckets[name]
		if name <= after || !strings.HasPrefix(name, out.Prefix) || (q.Get("bucket-region") != "" && b.region != q.Get("bucket-region")) {
			continue
		}
		if len(out.Buckets) == limit {
			out.ContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(out.Buckets[limit-1].Name))
			break
		}
		out.Buckets = append(out.Buckets, bucketEntry{Name: name, CreationDate: isoTime(b.created), BucketRegion: b.region})
	}
	return out, nil
}

type locationConstraint struct {
	XMLName xml.Name `xml:"LocationConstraint"`
	Xmlns   string   `xml:"xmlns,attr"`
	Region  string   `xml:",chardata"`
}

// getBucketLocation answers an empty LocationConstraint for us-east-1, as
// AWS does.
func (s *Service) getBucketLocation(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:GetBucketLocation", "", func(b *bucket) (any, error) {
		region := b.region
		if region == "us-east-1" {
			region = ""
		}
		return locationConstraint{Xmlns: xmlns, Region: region}, nil
	})
}

// isoTime is S3's timestamp form in XML bodies.
func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// httpTime is S3's timestamp form in headers.
func httpTime(t time.Time) string { return t.UTC().Format(http.TimeFormat) }
