package differential_test

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

const s3Bucket = "diff-claims"

func TestDifferentialS3Buckets(t *testing.T) {
	compareOn(t, "s3/buckets", s3.NewFromConfig, func(r *run, c *s3.Client) {
		out, err := c.CreateBucket(r.ctx, &s3.CreateBucketInput{Bucket: aws.String("diff-buckets")})
		r.rec("CreateBucket", out, err)
		out, err = c.CreateBucket(r.ctx, &s3.CreateBucketInput{Bucket: aws.String("diff-buckets")})
		r.rec("CreateBucket again", out, err)
		out, err = c.CreateBucket(r.ctx, &s3.CreateBucketInput{Bucket: aws.String("Diff_Bad")})
		r.rec("CreateBucket invalid name", out, err)
		out, err = c.CreateBucket(r.ctx, &s3.CreateBucketInput{Bucket: aws.String("diff-east"),
			CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "us-east-1"}})
		r.rec("CreateBucket constraint us-east-1", out, err)
		head, err := c.HeadBucket(r.ctx, &s3.HeadBucketInput{Bucket: aws.String("diff-buckets")})
		r.rec("HeadBucket", head, err)
		head, err = c.HeadBucket(r.ctx, &s3.HeadBucketInput{Bucket: aws.String("diff-none")})
		r.rec("HeadBucket missing", head, err)
		tagging, err := c.GetBucketTagging(r.ctx, &s3.GetBucketTaggingInput{Bucket: aws.String("diff-buckets")})
		r.rec("GetBucketTagging none", tagging, err)
		ptag, err := c.PutBucketTagging(r.ctx, &s3.PutBucketTaggingInput{Bucket: aws.String("diff-buckets"),
			Tagging: &s3types.Tagging{TagSet: []s3types.Tag{{Key: aws.String("team"), Value: aws.String("billing")}}}})
		r.rec("PutBucketTagging", ptag, err)
		tagging, err = c.GetBucketTagging(r.ctx, &s3.GetBucketTaggingInput{Bucket: aws.String("diff-buckets")})
		r.rec("GetBucketTagging", tagging, err)
		enc, err := c.GetBucketEncryption(r.ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String("diff-buckets")})
		r.rec("GetBucketEncryption default", enc, err)
		penc, err := c.PutBucketEncryption(r.ctx, &s3.PutBucketEncryptionInput{Bucket: aws.String("diff-buckets"),
			ServerSideEncryptionConfiguration: &s3types.ServerSideEncryptionConfiguration{Rules: []s3types.ServerSideEncryptionRule{{
				ApplyServerSideEncryptionByDefault: &s3types.ServerSideEncryptionByDefault{SSEAlgorithm: s3types.ServerSideEncryptionAwsKms,
					KMSMasterKeyID: aws.String("arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab")},
				BucketKeyEnabled: aws.Bool(true)}}}})
		r.rec("PutBucketEncryption", penc, err)
		enc, err = c.GetBucketEncryption(r.ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String("diff-buckets")})
		r.rec("GetBucketEncryption", enc, err)
		s3Access(r, c)
		list, err := c.ListBuckets(r.ctx, &s3.ListBucketsInput{Prefix: aws.String("diff-buckets")})
		r.rec("ListBuckets", list, err)
		dtag, err := c.DeleteBucketTagging(r.ctx, &s3.DeleteBucketTaggingInput{Bucket: aws.String("diff-buckets")})
		r.rec("DeleteBucketTagging", dtag, err)
		denc, err := c.DeleteBucketEncryption(r.ctx, &s3.DeleteBucketEncryptionInput{Bucket: aws.String("diff-buckets")})
		r.rec("DeleteBucketEncryption", denc, err)
		del, err := c.DeleteBucket(r.ctx, &s3.DeleteBucketInput{Bucket: aws.String("diff-buckets")})
		r.rec("DeleteBucket", del, err)
		del, err = c.DeleteBucket(r.ctx, &s3.DeleteBucketInput{Bucket: aws.String("diff-buckets")})
		r.rec("DeleteBucket missing", del, err)
	})
}

// s3Access puts and reads a TLS-only bucket policy, lifecycle rules and
// the public access block of diff-buckets.
func s3Access(r *run, c *s3.Client) {
	b := aws.String("diff-buckets")
	pol, err := c.GetBucketPolicy(r.ctx, &s3.GetBucketPolicyInput{Bucket: b})
	r.rec("GetBucketPolicy none", pol, err)
	policy := `{"Version":"2012-10-17","Statement":[{"Sid":"TLSOnly","Effect":"Deny","Principal":"*","Action":"s3:*",` +
		`"Resource":["arn:aws:s3:::diff-buckets","arn:aws:s3:::diff-buckets/*"],"Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`
	ppol, err := c.PutBucketPolicy(r.ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(policy)})
	r.rec("PutBucketPolicy", ppol, err)
	pol, err = c.GetBucketPolicy(r.ctx, &s3.GetBucketPolicyInput{Bucket: b})
	r.rec("GetBucketPolicy", pol, err)
	ppol, err = c.PutBucketPolicy(r.ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String("not json")})
	r.rec("PutBucketPolicy malformed", ppol, err)
	dpol, err := c.DeleteBucketPolicy(r.ctx, &s3.DeleteBucketPolicyInput{Bucket: b})
	r.rec("DeleteBucketPolicy", dpol, err)
	pab, err := c.PutPublicAccessBlock(r.ctx, &s3.PutPublicAccessBlockInput{Bucket: b, PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{
		BlockPublicAcls: aws.Bool(true), IgnorePublicAcls: aws.Bool(true), BlockPublicPolicy: aws.Bool(true), RestrictPublicBuckets: aws.Bool(false)}})
	r.rec("PutPublicAccessBlock", pab, err)
	gpab, err := c.GetPublicAccessBlock(r.ctx, &s3.GetPublicAccessBlockInput{Bucket: b})
	r.rec("GetPublicAccessBlock", gpab, err)
	dpab, err := c.DeletePublicAccessBlock(r.ctx, &s3.DeletePublicAccessBlockInput{Bucket: b})
	r.rec("DeletePublicAccessBlock", dpab, err)
	gpab, err = c.GetPublicAccessBlock(r.ctx, &s3.GetPublicAccessBlockInput{Bucket: b})
	r.rec("GetPublicAccessBlock after delete", gpab, err)
	lc, err := c.GetBucketLifecycleConfiguration(r.ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: b})
	r.rec("GetBucketLifecycleConfiguration none", lc, err)
	rules := []s3types.LifecycleRule{
		{ID: aws.String("uncommitted"), Status: s3types.ExpirationStatusEnabled, Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(1)},
			Filter: &s3types.LifecycleRuleFilter{Tag: &s3types.Tag{Key: aws.String("state"), Value: aws.String("uncommitted")}}},
		{ID: aws.String("published"), Status: s3types.ExpirationStatusEnabled, Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(7)},
			Filter: &s3types.LifecycleRuleFilter{And: &s3types.LifecycleRuleAndOperator{Prefix: aws.String("claims/"),
				Tags: []s3types.Tag{{Key: aws.String("state"), Value: aws.String("published")}}}}},
	}
	plc, err := c.PutBucketLifecycleConfiguration(r.ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: b,
		LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: rules}})
	r.rec("PutBucketLifecycleConfiguration", plc, err)
	lc, err = c.GetBucketLifecycleConfiguration(r.ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: b})
	r.rec("GetBucketLifecycleConfiguration", lc, err)
	bad := []s3types.LifecycleRule{{ID: aws.String("zero"), Status: s3types.ExpirationStatusEnabled,
		Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(0)}, Filter: &s3types.LifecycleRuleFilter{Prefix: aws.String("")}}}
	plc, err = c.PutBucketLifecycleConfiguration(r.ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: b,
		LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: bad}})
	r.rec("PutBucketLifecycleConfiguration zero days", plc, err)
	dlc, err := c.DeleteBucketLifecycle(r.ctx, &s3.DeleteBucketLifecycleInput{Bucket: b})
	r.rec("DeleteBucketLifecycle", dlc, err)
}

func TestDifferentialS3Objects(t *testing.T) {
	compareOn(t, "s3/objects", s3.NewFromConfig, func(r *run, c *s3.Client) {
		b := aws.String(s3Bucket)
		cb, err := c.CreateBucket(r.ctx, &s3.CreateBucketInput{Bucket: b})
		if err != nil {
			r.rec("CreateBucket", cb, err)
			return
		}
		data := []byte(`{"invoice":42}`)
		sum := sha256.Sum256(data)
		put, err := c.PutObject(r.ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("claims/a.json"), Body: strings.NewReader(string(data)),
			ContentType: aws.String("application/json"), Metadata: map[string]string{"sha256": "x"}, Tagging: aws.String("state=uncommitted"),
			ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum[:])), ServerSideEncryption: s3types.ServerSideEncryptionAwsKms,
			SSEKMSKeyId: aws.String("arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab")})
		r.rec("PutObject", put, err)
		wrong := sha256.Sum256([]byte("other"))
		put, err = c.PutObject(r.ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("claims/bad"), Body: strings.NewReader("x"),
			ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(wrong[:]))})
		r.rec("PutObject wrong checksum", put, err)
		// Whether or not it was stored, it must not change what follows.
		_, _ = c.DeleteObject(r.ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("claims/bad")})
		for _, k := range []string{"claims/b.json", "claims/sub/c.json", "other.txt"} {
			put, err = c.PutObject(r.ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: strings.NewReader(k)})
			r.rec("PutObject "+k, put, err)
		}
		put, err = c.PutObject(r.ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("other.txt"), Body: strings.NewReader("again"), IfNoneMatch: aws.String("*")})
		r.rec("PutObject If-None-Match over an object", put, err)
		s3Reads(r, c)
		tags, err := c.GetObjectTagging(r.ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String("claims/a.json")})
		r.rec("GetObjectTagging", tags, err)
		ptags, err := c.PutObjectTagging(r.ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: aws.String("claims/a.json"),
			Tagging: &s3types.Tagging{TagSet: []s3types.Tag{{Key: aws.String("state"), Value: aws.String("published")}}}})
		r.rec("PutObjectTagging", ptags, err)
		tags, err = c.GetObjectTagging(r.ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String("claims/a.json")})
		r.rec("GetObjectTagging after put", tags, err)
		dtags, err := c.DeleteObjectTagging(r.ctx, &s3.DeleteObjectTaggingInput{Bucket: b, Key: aws.String("claims/a.json")})
		r.rec("DeleteObjectTagging", dtags, err)
		s3Lists(r, c)
		s3Multipart(r, c)
		dbk, err := c.DeleteBucket(r.ctx, &s3.DeleteBucketInput{Bucket: b})
		r.rec("DeleteBucket not empty", dbk, err)
		dels, err := c.DeleteObjects(r.ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &s3types.Delete{Objects: []s3types.ObjectIdentifier{
			{Key: aws.String("claims/a.json")}, {Key: aws.String("claims/b.json")}, {Key: aws.String("never")}}}})
		r.rec("DeleteObjects", dels, err)
		for _, k := range []string{"claims/sub/c.json", "other.txt", "never", "multi"} {
			del, err := c.DeleteObject(r.ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(k)})
			r.rec("DeleteObject "+k, del, err)
		}
		dbk, err = c.DeleteBucket(r.ctx, &s3.DeleteBucketInput{Bucket: b})
		r.rec("DeleteBucket", dbk, err)
	})
}

// s3Reads gets and heads objects: whole, ranged, with checksums, missing.
func s3Reads(r *run, c *s3.Client) {
	b := aws.String(s3Bucket)
	get := func(name string, in *s3.GetObjectInput) {
		out, err := c.GetObject(r.ctx, in)
		if err == nil {
			body, rerr := io.ReadAll(out.Body)
			_ = out.Body.Close()
			r.note(name+" body", map[string]any{"body": string(body), "error": rerr != nil})
			out.Body = nil
		}
		r.rec(name, out, err)
	}
	get("GetObject", &s3.GetObjectInput{Bucket: b, Key: aws.String("claims/a.json"), ChecksumMode: s3types.ChecksumModeEnabled})
	get("GetObject range", &s3.GetObjectInput{Bucket: b, Key: aws.String("claims/a.json"), Range: aws.String("bytes=2-8")})
	get("GetObject range past the end", &s3.GetObjectInput{Bucket: b, Key: aws.String("claims/a.json"), Range: aws.String("bytes=100-")})
	get("GetObject missing", &s3.GetObjectInput{Bucket: b, Key: aws.String("claims/none")})
	get("GetObject missing bucket", &s3.GetObjectInput{Bucket: aws.String("diff-no-bucket"), Key: aws.String("k")})
	head, err := c.HeadObject(r.ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("claims/a.json"), ChecksumMode: s3types.ChecksumModeEnabled})
	r.rec("HeadObject", head, err)
	head, err = c.HeadObject(r.ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("other.txt")})
	r.rec("HeadObject plain", head, err)
	head, err = c.HeadObject(r.ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("claims/none")})
	r.rec("HeadObject missing", head, err)
}

// s3Lists lists with prefix, delimiter and pages of max-keys.
func s3Lists(r *run, c *s3.Client) {
	b := aws.String(s3Bucket)
	list, err := c.ListObjectsV2(r.ctx, &s3.ListObjectsV2Input{Bucket: b})
	r.rec("ListObjectsV2", list, err)
	list, err = c.ListObjectsV2(r.ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("claims/"), Delimiter: aws.String("/")})
	r.rec("ListObjectsV2 delimiter", list, err)
	var token *string
	for page := 1; page <= 4; page++ {
		list, err = c.ListObjectsV2(r.ctx, &s3.ListObjectsV2Input{Bucket: b, MaxKeys: aws.Int32(2), ContinuationToken: token})
		if err != nil || !aws.ToBool(list.IsTruncated) {
			if list != nil && list.ContinuationToken != nil {
				list.ContinuationToken = aws.String("<token>")
			}
			r.rec("ListObjectsV2 page", list, err)
			break
		}
		// Tokens are opaque: only their presence is compared.
		token, list.ContinuationToken, list.NextContinuationToken = list.NextContinuationToken, nil, aws.String("<token>")
		r.rec("ListObjectsV2 page", list, err)
	}
	list, err = c.ListObjectsV2(r.ctx, &s3.ListObjectsV2Input{Bucket: aws.String("diff-no-bucket")})
	r.rec("ListObjectsV2 missing bucket", list, err)
}

// s3Multipart uploads an object in two parts (5 MiB and a tail), fails to
// complete one with a small first part, and aborts it.
func s3Multipart(r *run, c *s3.Client) {
	b := aws.String(s3Bucket)
	upload := func(name, key string, parts ...[]byte) (*string, []s3types.CompletedPart) {
		mu, err := c.CreateMultipartUpload(r.ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String(key), ContentType: aws.String("application/pdf")})
		r.rec(name+" CreateMultipartUpload", mu, err)
		if err != nil {
			return nil, nil
		}
		var done []s3types.CompletedPart
		for i, p := range parts {
			out, err := c.UploadPart(r.ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String(key), UploadId: mu.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: strings.NewReader(string(p))})
			r.rec(name+" UploadPart", out, err)
			if err == nil {
				done = append(done, s3types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag})
			}
		}
		return mu.UploadId, done
	}
	id, parts := upload("multi", "multi", []byte(strings.Repeat("a", 5<<20)), []byte("tail"))
	if id != nil {
		done, err := c.CompleteMultipartUpload(r.ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("multi"), UploadId: id,
			MultipartUpload: &s3types.CompletedMultipartUpload{Parts: parts}})
		r.rec("multi CompleteMultipartUpload", done, err)
		head, err := c.HeadObject(r.ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("multi")})
		r.rec("multi HeadObject", head, err)
	}
	id, parts = upload("small", "small", []byte("x"), []byte("y"))
	if id != nil {
		done, err := c.CompleteMultipartUpload(r.ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("small"), UploadId: id,
			MultipartUpload: &s3types.CompletedMultipartUpload{Parts: parts}})
		r.rec("small CompleteMultipartUpload", done, err)
		abort, err := c.AbortMultipartUpload(r.ctx, &s3.AbortMultipartUploadInput{Bucket: b, Key: aws.String("small"), UploadId: id})
		r.rec("small AbortMultipartUpload", abort, err)
		abort, err = c.AbortMultipartUpload(r.ctx, &s3.AbortMultipartUploadInput{Bucket: b, Key: aws.String("small"), UploadId: id})
		r.rec("small AbortMultipartUpload again", abort, err)
	}
}
