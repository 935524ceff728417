package s3

import (
	"encoding/xml"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Tag limits (https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-tagging.html).
const (
	maxObjectTags = 10
	maxBucketTags = 50
)

type tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type tagging struct {
	XMLName xml.Name `xml:"Tagging"`
	Xmlns   string   `xml:"xmlns,attr,omitempty"`
	TagSet  []tag    `xml:"TagSet>Tag"`
}

// checkTags validates a tag set: at most limit tags, keys of 1 to 128
// characters, values of at most 256, no key twice, no aws: keys.
func checkTags(tags []tag, limit int) (map[string]string, error) {
	if len(tags) > limit {
		if limit == maxObjectTags {
			return nil, awsapi.NewError("BadRequest", "Object tags cannot be greater than 10")
		}
		return nil, awsapi.NewError("InvalidTag", "Bucket tag count cannot be greater than 50")
	}
	out := make(map[string]string, len(tags))
	for _, t := range tags {
		switch {
		case len(t.Key) == 0 || len([]rune(t.Key)) > 128:
			return nil, awsapi.NewError("InvalidTag", "The TagKey you have provided is invalid")
		case len([]rune(t.Value)) > 256:
			return nil, awsapi.NewError("InvalidTag", "The TagValue you have provided is invalid")
		case strings.HasPrefix(strings.ToLower(t.Key), "aws:"):
			return nil, awsapi.NewError("InvalidTag", "System tags cannot be added/updated by requester")
		}
		if _, dup := out[t.Key]; dup {
			return nil, awsapi.NewError("InvalidTag", "Cannot provide multiple Tags with the same key")
		}
		out[t.Key] = t.Value
	}
	return out, nil
}

func tagSet(tags map[string]string) tagging {
	out := tagging{Xmlns: xmlns, TagSet: []tag{}}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out.TagSet = append(out.TagSet, tag{Key: k, Value: tags[k]})
	}
	return out
}

// readTagging decodes a Tagging document body and validates its tags.
func readTagging(req *awsapi.Request, limit int) (map[string]string, error) {
	p, err := readPayload(req)
	if err != nil {
		return nil, err
	}
	var in tagging
	if err := xml.Unmarshal(p.data, &in); err != nil {
		return nil, errMalformedXML()
	}
	return checkTags(in.TagSet, limit)
}

func (s *Service) putObjectTagging(req *awsapi.Request) (any, error) {
	tags, err := readTagging(req, maxObjectTags)
	if err != nil {
		return nil, err
	}
	return s.withObject(req, "s3:PutObjectTagging", func(_ *bucket, o *object) (any, error) {
		o.tags = tags
		return &awsapi.Raw{Header: s3Header(req, nil)}, nil
	})
}

func (s *Service) getObjectTagging(req *awsapi.Request) (any, error) {
	return s.withObject(req, "s3:GetObjectTagging", func(_ *bucket, o *object) (any, error) {
		return tagSet(o.tags), nil
	})
}

func (s *Service) deleteObjectTagging(req *awsapi.Request) (any, error) {
	return s.withObject(req, "s3:DeleteObjectTagging", func(_ *bucket, o *object) (any, error) {
		o.tags = nil
		return noContent(req), nil
	})
}

func (s *Service) putBucketTagging(req *awsapi.Request) (any, error) {
	tags, err := readTagging(req, maxBucketTags)
	if err != nil {
		return nil, err
	}
	return s.withBucket(req, "s3:PutBucketTagging", "", func(b *bucket) (any, error) {
		b.tags = tags
		return noContent(req), nil
	})
}

func (s *Service) getBucketTagging(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:GetBucketTagging", "", func(b *bucket) (any, error) {
		if len(b.tags) == 0 {
			return nil, errNotFound("NoSuchTagSet", "The TagSet does not exist", b.name)
		}
		return tagSet(b.tags), nil
	})
}

func (s *Service) deleteBucketTagging(req *awsapi.Request) (any, error) {
	return s.withBucket(req, "s3:PutBucketTagging", "", func(b *bucket) (any, error) {
		b.tags = nil
		return &awsapi.Raw{Status: http.StatusNoContent, Header: s3Header(req, nil)}, nil
	})
}
