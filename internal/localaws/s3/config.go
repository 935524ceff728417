package s3

import (
	"encoding/xml"
	"net/http"
	"slices"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
)

// readConfig decodes an XML configuration body into v, after its
// integrity headers are checked.
func readConfig(req *awsapi.Request, v any) error {
	p, err := readPayload(req)
	if err != nil {
		return err
	}
	if err := xml.Unmarshal(p.data, v); err != nil {
		return errMalformedXML()
	}
	return nil
}

// putBucketPolicy stores a policy that parses, whose resources are the
// bucket and its objects; with BlockPublicPolicy set, a policy that
// grants access to everyone is refused.
func (s *Service) putBucketPolicy(req *awsapi.Request) (any, error) {
	p, err := readPayload(req)
	if err != nil {
		return nil, err
	}
	doc := strings.TrimSpace(string(p.data))
	pol, err := iampolicy.Parse(doc)
	if err != nil {
		return nil, awsapi.NewError("MalformedPolicy", "Policies must be valid JSON and the first byte must be '{'")
	}
	return s.withBucket(req, "s3:PutBucketPolicy", "", func(b *bucket) (any, error) {
		for _, st := range pol.Statements {
			for _, r := range append(append([]string{}, st.Resource...), st.NotResource...) {
				if r != b.arn() && !strings.HasPrefix(r, b.arn()+"/") {
					return nil, awsapi.NewError("MalformedPolicy", "Policy has invalid resource")
				}
			}
		}
		if b.publicAccess.blockPublicPolicy() && publicPolicy(pol) {
			return nil, errAccessDenied("User: " + req.Principal.ARN + " is not authorized to perform: s3:PutBucketPolicy on resource: \"" +
				b.arn() + "\" because public policies are blocked by the BlockPublicPolicy block public access setting.")
		}
		b.policy = doc
		return noContent(req), nil
	})
}

// publicPolicy reports whether a policy allows everyone (Principal "*")
// with no condition: what BlockPublicPolicy refuses.
func publicPolicy(p *iampolicy.Policy) bool {
	for _, st := range p.Statements {
		if st.Effect != "Allow" || st.Principal == nil || len(st.Condition) > 0 {
			continue
		}
		if st.Principal.Any || slices.Contains(st.Principal.AWS, "*") {
			return true
		}
	}
	return false
}

func (s *Service) getBucketPolicy(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:GetBucketPolicy", "", func(b *bucket) (any, error) {
		if b.policy == "" {
			return nil, errNotFound("NoSuchBucketPolicy", "The bucket policy does not exist", b.name)
		}
		return &awsapi.Raw{Header: s3Header(req, http.Header{"Content-Type": {"application/json"}}), Body: []byte(b.policy)}, nil
	})
}

func (s *Service) deleteBucketPolicy(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:DeleteBucketPolicy", "", func(b *bucket) (any, error) {
		b.policy = ""
		return noContent(req), nil
	})
}

// publicAccessBlock is a PublicAccessBlockConfiguration. New buckets have
// every setting on, as AWS creates them since April 2023.
type publicAccessBlock struct {
	XMLName               xml.Name `xml:"PublicAccessBlockConfiguration"`
	Xmlns                 string   `xml:"xmlns,attr,omitempty"`
	BlockPublicAcls       bool     `xml:"BlockPublicAcls"`
	IgnorePublicAcls      bool     `xml:"IgnorePublicAcls"`
	BlockPublicPolicy     bool     `xml:"BlockPublicPolicy"`
	RestrictPublicBuckets bool     `xml:"RestrictPublicBuckets"`
}

func defaultPublicAccessBlock() *publicAccessBlock {
	return &publicAccessBlock{BlockPublicAcls: true, IgnorePublicAcls: true, BlockPublicPolicy: true, RestrictPublicBuckets: true}
}

func (p *publicAccessBlock) blockPublicPolicy() bool { return p != nil && p.BlockPublicPolicy }

func (s *Service) putPublicAccessBlock(req *awsapi.Request) (any, error) {
	var in publicAccessBlock
	if err := readConfig(req, &in); err != nil {
		return nil, err
	}
	return s.withBucket(req, "s3:PutBucketPublicAccessBlock", "", func(b *bucket) (any, error) {
		b.publicAccess = &in
		return &awsapi.Raw{Header: s3Header(req, nil)}, nil
	})
}

func (s *Service) getPublicAccessBlock(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:GetBucketPublicAccessBlock", "", func(b *bucket) (any, error) {
		if b.publicAccess == nil {
			return nil, errNotFound("NoSuchPublicAccessBlockConfiguration", "The public access block configuration was not found", b.name)
		}
		out := *b.publicAccess
		out.Xmlns = xmlns
		return out, nil
	})
}

func (s *Service) deletePublicAccessBlock(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:PutBucketPublicAccessBlock", "", func(b *bucket) (any, error) {
		b.publicAccess = nil
		return noContent(req), nil
	})
}

// encryptionConfiguration is a ServerSideEncryptionConfiguration.
type encryptionConfiguration struct {
	XMLName xml.Name         `xml:"ServerSideEncryptionConfiguration"`
	Xmlns   string           `xml:"xmlns,attr,omitempty"`
	Rules   []encryptionRule `xml:"Rule"`
}

type encryptionRule struct {
	Default struct {
		SSEAlgorithm   string `xml:"SSEAlgorithm"`
		KMSMasterKeyID string `xml:"KMSMasterKeyID,omitempty"`
	} `xml:"ApplyServerSideEncryptionByDefault"`
	BucketKeyEnabled bool `xml:"BucketKeyEnabled"`
}

// defaultSSE is the encryption a bucket applies to objects put without
// encryption headers.
type defaultSSE struct {
	SSEAlgorithm, KMSMasterKeyID string
	bucketKey                    bool
}

// defaultEncryption is the bucket's default encryption: SSE-S3 (AES256)
// unless configured, as AWS encrypts every new object since January 2023.
func (b *bucket) defaultEncryption() defaultSSE {
	if b.encryption == nil || len(b.encryption.Rules) == 0 {
		return defaultSSE{SSEAlgorithm: "AES256"}
	}
	r := b.encryption.Rules[0]
	return defaultSSE{SSEAlgorithm: r.Default.SSEAlgorithm, KMSMasterKeyID: r.Default.KMSMasterKeyID, bucketKey: r.BucketKeyEnabled}
}

func (s *Service) putBucketEncryption(req *awsapi.Request) (any, error) {
	var in encryptionConfiguration
	if err := readConfig(req, &in); err != nil {
		return nil, err
	}
	if len(in.Rules) != 1 {
		return nil, errMalformedXML()
	}
	switch d := in.Rules[0].Default; d.SSEAlgorithm {
	case "AES256":
		if d.KMSMasterKeyID != "" {
			return nil, errInvalidArgument("a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms or aws:kms:dsse")
		}
	case "aws:kms", "aws:kms:dsse":
	default:
		return nil, errMalformedXML()
	}
	return s.withBucket(req, "s3:PutEncryptionConfiguration", "", func(b *bucket) (any, error) {
		b.encryption = &in
		return &awsapi.Raw{Header: s3Header(req, nil)}, nil
	})
}

func (s *Service) getBucketEncryption(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:GetEncryptionConfiguration", "", func(b *bucket) (any, error) {
		d := b.defaultEncryption()
		var r encryptionRule
		r.Default.SSEAlgorithm, r.Default.KMSMasterKeyID, r.BucketKeyEnabled = d.SSEAlgorithm, d.KMSMasterKeyID, d.bucketKey
		return encryptionConfiguration{Xmlns: xmlns, Rules: []encryptionRule{r}}, nil
	})
}

// deleteBucketEncryption resets the bucket's default encryption to SSE-S3.
func (s *Service) deleteBucketEncryption(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:PutEncryptionConfiguration", "", func(b *bucket) (any, error) {
		b.encryption = nil
		return noContent(req), nil
	})
}
