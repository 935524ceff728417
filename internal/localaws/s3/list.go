package s3

import (
	"encoding/base64"
	"encoding/xml"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

type listBucketResult struct {
	XMLName               xml.Name       `xml:"ListBucketResult"`
	Xmlns                 string         `xml:"xmlns,attr"`
	Name                  string         `xml:"Name"`
	Prefix                string         `xml:"Prefix"`
	Delimiter             string         `xml:"Delimiter,omitempty"`
	MaxKeys               int            `xml:"MaxKeys"`
	EncodingType          string         `xml:"EncodingType,omitempty"`
	KeyCount              int            `xml:"KeyCount"`
	IsTruncated           bool           `xml:"IsTruncated"`
	ContinuationToken     string         `xml:"ContinuationToken,omitempty"`
	NextContinuationToken string         `xml:"NextContinuationToken,omitempty"`
	StartAfter            string         `xml:"StartAfter,omitempty"`
	Contents              []objectEntry  `xml:"Contents"`
	CommonPrefixes        []commonPrefix `xml:"CommonPrefixes"`
}

type objectEntry struct {
	Key               string `xml:"Key"`
	LastModified      string `xml:"LastModified"`
	ETag              string `xml:"ETag"`
	ChecksumAlgorithm string `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string `xml:"ChecksumType,omitempty"`
	Size              int    `xml:"Size"`
	Owner             *owner `xml:"Owner,omitempty"`
	StorageClass      string `xml:"StorageClass"`
}

type commonPrefix struct {
	Prefix string `xml:"Prefix"`
}

// listObjectsV2 lists keys in UTF-8 binary order, rolling keys that share
// a prefix up to the delimiter into CommonPrefixes; keys and common
// prefixes both count against max-keys (at most 1000). The continuation
// token is opaque: the last key or prefix returned, encoded.
func (s *Service) listObjectsV2(req *awsapi.Request) (any, error) {
	q := req.Query()
	n, ok := awsapi.IntParam(q, "max-keys", 1000, 0, math.MaxInt)
	if !ok {
		return nil, errInvalidArgument("Provided max-keys not an integer or within integer range")
	}
	maxKeys := min(n, 1000)
	after := q.Get("start-after")
	if tok := q.Get("continuation-token"); q.Has("continuation-token") {
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || tok == "" {
			return nil, errInvalidArgument("The continuation token provided is incorrect")
		}
		after = string(raw)
	}
	encoding := q.Get("encoding-type")
	if encoding != "" && encoding != "url" {
		return nil, errInvalidArgument("Invalid Encoding Method specified in Request")
	}
	return s.withBucket(req, "s3:ListBucket", "", func(b *bucket) (any, error) {
		out := listBucketResult{Xmlns: xmlns, Name: b.name, Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), MaxKeys: maxKeys,
			EncodingType: encoding, ContinuationToken: q.Get("continuation-token"), StartAfter: q.Get("start-after")}
		s.collectKeys(b, &out, after, q.Get("fetch-owner") == "true")
		if encoding == "url" {
			encodeList(&out)
		}
		return out, nil
	})
}

func (s *Service) collectKeys(b *bucket, out *listBucketResult, after string, fetchOwner bool) {
	last := ""
	for _, key := range slices.Sorted(maps.Keys(b.objects)) {
		if key <= after || !strings.HasPrefix(key, out.Prefix) {
			continue
		}
		entry, isPrefix := key, false
		if d := out.Delimiter; d != "" {
			if i := strings.Index(key[len(out.Prefix):], d); i >= 0 {
				entry, isPrefix = key[:len(out.Prefix)+i+len(d)], true
				if entry == last {
					continue
				}
			}
		}
		if out.KeyCount == out.MaxKeys {
			out.IsTruncated = true
			if last != "" {
				out.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(lastKeyOf(last, b)))
			}
			return
		}
		out.KeyCount++
		last = entry
		if isPrefix {
			out.CommonPrefixes = append(out.CommonPrefixes, commonPrefix{Prefix: entry})
			continue
		}
		o := b.objects[key]
		e := objectEntry{Key: key, LastModified: isoTime(o.modified), ETag: o.etag, Size: len(o.data), StorageClass: storageClass(o)}
		if o.checksumAlg != "" {
			e.ChecksumAlgorithm, e.ChecksumType = strings.ToUpper(o.checksumAlg), "FULL_OBJECT"
		}
		if fetchOwner {
			own := s.owner()
			e.Owner = &own
		}
		out.Contents = append(out.Contents, e)
	}
}

// lastKeyOf is the key a listing resumes after: for a common prefix, the
// last key under it, so that the next page skips the whole prefix.
func lastKeyOf(entry string, b *bucket) string {
	last := entry
	for key := range b.objects {
		if strings.HasPrefix(key, entry) && key > last {
			last = key
		}
	}
	return last
}

func storageClass(o *object) string {
	if o.storageClass == "" {
		return "STANDARD"
	}
	return o.storageClass
}

// encodeList URL-encodes the keys and prefixes of a listing
// (encoding-type=url).
func encodeList(out *listBucketResult) {
	enc := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	out.Prefix, out.Delimiter, out.StartAfter = enc(out.Prefix), enc(out.Delimiter), enc(out.StartAfter)
	for i := range out.Contents {
		out.Contents[i].Key = enc(out.Contents[i].Key)
	}
	for i := range out.CommonPrefixes {
		out.CommonPrefixes[i].Prefix = enc(out.CommonPrefixes[i].Prefix)
	}
}

type deleteRequest struct {
	Quiet   bool `xml:"Quiet"`
	Objects []struct {
		Key       string `xml:"Key"`
		VersionID string `xml:"VersionId"`
	} `xml:"Object"`
}

type deleteResult struct {
	XMLName xml.Name       `xml:"DeleteResult"`
	Xmlns   string         `xml:"xmlns,attr"`
	Deleted []deletedEntry `xml:"Deleted"`
	Errors  []deleteError  `xml:"Error"`
}

type deletedEntry struct {
	Key string `xml:"Key"`
}

type deleteError struct {
	Key     string `xml:"Key"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// deleteObjects deletes up to 1000 keys; the request must carry
// Content-MD5 or an x-amz-checksum-* header. Each key is authorised as
// s3:DeleteObject, and a refused key is an Error entry.
func (s *Service) deleteObjects(req *awsapi.Request) (any, error) {
	p, err := readPayload(req)
	if err != nil {
		return nil, err
	}
	if p.checksumAlg == "" && req.HTTP.Header.Get("Content-MD5") == "" {
		return nil, errInvalidRequest("Missing required header for this request: Content-MD5")
	}
	var in deleteRequest
	if err := xml.Unmarshal(p.data, &in); err != nil || len(in.Objects) == 0 || len(in.Objects) > 1000 {
		return nil, errMalformedXML()
	}
	return s.withBucket(req, "", "", func(b *bucket) (any, error) {
		out := deleteResult{Xmlns: xmlns}
		for _, o := range in.Objects {
			if err := s.authorize(req, b, "s3:DeleteObject", b.arn()+"/"+o.Key); err != nil {
				e := awsapi.AsError(err)
				out.Errors = append(out.Errors, deleteError{Key: o.Key, Code: e.Code, Message: e.Message})
				continue
			}
			delete(b.objects, o.Key)
			if !in.Quiet {
				out.Deleted = append(out.Deleted, deletedEntry{Key: o.Key})
			}
		}
		return out, nil
	})
}
