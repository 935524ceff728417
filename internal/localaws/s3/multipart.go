package s3

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Multipart upload limits (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html).
const (
	minPartSize = 5 << 20
	maxParts    = 10000
)

// upload is a multipart upload in progress: the object it will make,
// without its data, and its parts by number.
type upload struct {
	id        string
	initiated time.Time
	object    *object
	parts     map[int]part
}

type part struct {
	data []byte
	etag string
}

type initiateResult struct {
	XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
	Xmlns    string   `xml:"xmlns,attr"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	UploadID string   `xml:"UploadId"`
}

// createMultipartUpload starts an upload; the object's headers, tags and
// encryption are those of this request, as for PutObject.
func (s *Service) createMultipartUpload(req *awsapi.Request) (any, error) {
	key := objectKey(req)
	return s.withNewObject(req, key, nil, func(b *bucket, o *object) (any, error) {
		u := &upload{id: newRuleID(), initiated: o.modified, object: o, parts: map[int]part{}}
		if b.uploads == nil {
			b.uploads = map[string]*upload{}
		}
		b.uploads[u.id] = u
		out := s3Header(req, http.Header{"Content-Type": {"application/xml"}})
		o.sse.write(out)
		body, err := xml.Marshal(initiateResult{Xmlns: xmlns, Bucket: b.name, Key: key, UploadID: u.id})
		if err != nil {
			return nil, err
		}
		return &awsapi.Raw{Header: out, Body: append([]byte(xml.Header), body...)}, nil
	})
}

// withUpload runs fn with the request's upload (uploadId) of its key.
func (s *Service) withUpload(req *awsapi.Request, action string, fn func(b *bucket, u *upload) (any, error)) (any, error) {
	key := objectKey(req)
	return s.withBucket(req, action, key, func(b *bucket) (any, error) {
		u, ok := b.uploads[req.Query().Get("uploadId")]
		if !ok || u.object.key != key {
			return nil, awsapi.NewError("NoSuchUpload", "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.").
				WithStatus(http.StatusNotFound).With("UploadId", req.Query().Get("uploadId"))
		}
		return fn(b, u)
	})
}

func (s *Service) uploadPart(req *awsapi.Request) (any, error) {
	n, err := strconv.Atoi(req.Query().Get("partNumber"))
	if err != nil || n < 1 || n > maxParts {
		return nil, errInvalidArgument("Part number must be an integer between 1 and 10000, inclusive")
	}
	p, err := readPayload(req)
	if err != nil {
		return nil, err
	}
	return s.withUpload(req, "s3:PutObject", func(b *bucket, u *upload) (any, error) {
		pt := part{data: p.data, etag: etagOf(p.data)}
		u.parts[n] = pt
		out := s3Header(req, http.Header{"ETag": {pt.etag}})
		u.object.sse.write(out)
		if p.checksumAlg != "" {
			out.Set("x-amz-checksum-"+p.checksumAlg, p.checksum)
		}
		return &awsapi.Raw{Header: out}, nil
	})
}

type completeRequest struct {
	Parts []struct {
		PartNumber int    `xml:"PartNumber"`
		ETag       string `xml:"ETag"`
	} `xml:"Part"`
}

type completeResult struct {
	XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
	Xmlns    string   `xml:"xmlns,attr"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

// completeMultipartUpload joins the listed parts, in ascending order, each
// of at least 5 MiB but the last, into the object, whose ETag is the MD5
// of the parts' MD5s and their count ("<hex>-<n>").
func (s *Service) completeMultipartUpload(req *awsapi.Request) (any, error) {
	var in completeRequest
	if err := readConfig(req, &in); err != nil {
		return nil, err
	}
	if len(in.Parts) == 0 {
		return nil, errMalformedXML()
	}
	return s.withUpload(req, "s3:PutObject", func(b *bucket, u *upload) (any, error) {
		var data, sums bytes.Buffer
		for i, p := range in.Parts {
			pt, ok := u.parts[p.PartNumber]
			switch {
			case i > 0 && p.PartNumber <= in.Parts[i-1].PartNumber:
				return nil, awsapi.NewError("InvalidPartOrder", "The list of parts was not in ascending order. The parts list must be specified in order by part number.")
			case !ok || strings.Trim(p.ETag, `"`) != strings.Trim(pt.etag, `"`):
				return nil, awsapi.NewError("InvalidPart", "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")
			case i < len(in.Parts)-1 && len(pt.data) < minPartSize:
				return nil, awsapi.NewError("EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size")
			}
			data.Write(pt.data)
			raw, _ := hex.DecodeString(strings.Trim(pt.etag, `"`))
			sums.Write(raw)
		}
		o := u.object
		total := md5.Sum(sums.Bytes())
		o.data, o.etag, o.modified = data.Bytes(), `"`+hex.EncodeToString(total[:])+"-"+strconv.Itoa(len(in.Parts))+`"`, s.env.Time().UTC()
		b.objects[o.key] = o
		delete(b.uploads, u.id)
		out := s3Header(req, http.Header{"Content-Type": {"application/xml"}})
		o.sse.write(out)
		s.writeExpiration(out, b, o)
		body, err := xml.Marshal(completeResult{Xmlns: xmlns, Location: s.env.Endpoint + "/" + b.name + "/" + o.key, Bucket: b.name, Key: o.key, ETag: o.etag})
		if err != nil {
			return nil, err
		}
		return &awsapi.Raw{Header: out, Body: append([]byte(xml.Header), body...)}, nil
	})
}

func (s *Service) abortMultipartUpload(req *awsapi.Request) (any, error) {
	return s.withUpload(req, "s3:AbortMultipartUpload", func(b *bucket, u *upload) (any, error) {
		delete(b.uploads, u.id)
		return noContent(req), nil
	})
}
