package s3_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	locals3 "github.com/outboxkit/terraform-provider-outbox/internal/localaws/s3"
)

// config is the stack's SDK configuration with the checksum defaults
// config.LoadDefaultConfig gives real clients: a CRC32 on every PutObject,
// response checksums validated.
func config(s *localaws.Stack) aws.Config {
	cfg := localawstest.Config(s)
	cfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
	cfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported
	return cfg
}

func client(s *localaws.Stack, opts ...func(*s3.Options)) *s3.Client {
	return s3.NewFromConfig(config(s), opts...)
}

// wantCode fails unless err is an API error with code and HTTP status.
func wantCode(t *testing.T, err error, code string, status int) {
	t.Helper()
	localawstest.WantCode(t, err, code, "the call")
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != status {
		t.Fatalf("error = %v, want HTTP status %d", err, status)
	}
}

func mustBucket(t *testing.T, c *s3.Client, name string) {
	t.Helper()
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("CreateBucket %s: %v", name, err)
	}
}

// newBucket starts a local stack with a bucket of that name and returns
// an S3 client of it.
func newBucket(t *testing.T, name string) (*s3.Client, context.Context) {
	t.Helper()
	c := client(localawstest.Start(t))
	mustBucket(t, c, name)
	return c, context.Background()
}

func put(t *testing.T, c *s3.Client, in *s3.PutObjectInput) *s3.PutObjectOutput {
	t.Helper()
	out, err := c.PutObject(context.Background(), in)
	if err != nil {
		t.Fatalf("PutObject %s: %v", aws.ToString(in.Key), err)
	}
	return out
}

func read(t *testing.T, c *s3.Client, in *s3.GetObjectInput) ([]byte, *s3.GetObjectOutput) {
	t.Helper()
	out, err := c.GetObject(context.Background(), in)
	if err != nil {
		t.Fatalf("GetObject %s: %v", aws.ToString(in.Key), err)
	}
	defer func() { _ = out.Body.Close() }()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("reading GetObject %s: %v", aws.ToString(in.Key), err)
	}
	return b, out
}

func TestBuckets(t *testing.T) {
	t.Parallel()
	s := localawstest.Start(t)
	c, ctx := client(s), context.Background()
	mustBucket(t, c, "claims")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("claims")}); err != nil {
		t.Fatalf("re-creating an owned bucket in us-east-1 = %v, want 200 as AWS's legacy behaviour", err)
	}
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("Bad_Name")})
	wantCode(t, err, "InvalidBucketName", 400)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("east"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "us-east-1"}})
	wantCode(t, err, "InvalidLocationConstraint", 400)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("in-ireland"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "eu-west-1"}}); err != nil {
		t.Fatal(err)
	}
	loc, err := c.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: aws.String("in-ireland")})
	if err != nil || loc.LocationConstraint != "eu-west-1" {
		t.Fatalf("GetBucketLocation = %+v, %v", loc, err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("claims")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("missing")})
	wantCode(t, err, "NotFound", 404)
	list, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(list.Buckets) != 2 || aws.ToString(list.Buckets[0].Name) != "claims" || list.Buckets[0].CreationDate == nil {
		t.Fatalf("ListBuckets = %+v, %v", list, err)
	}
	put(t, c, &s3.PutObjectInput{Bucket: aws.String("claims"), Key: aws.String("k"), Body: strings.NewReader("x")})
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("claims")})
	wantCode(t, err, "BucketNotEmpty", 409)
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("claims"), Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("claims")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("claims")})
	wantCode(t, err, "NoSuchBucket", 404)
	if inv := s.Router().Inventory()["s3"]; len(inv) != 1 || inv[0] != "arn:aws:s3:::in-ireland" {
		t.Fatalf("inventory = %v", inv)
	}
}

// TestRegionalEndpoint: outside us-east-1 the constraint must name the
// endpoint's Region, and re-creating an owned bucket is an error.
func TestRegionalEndpoint(t *testing.T) {
	t.Parallel()
	s := localawstest.Start(t, func(o *localaws.Options) { o.Region = "eu-central-1" })
	c, ctx := client(s), context.Background()
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("regional")})
	wantCode(t, err, "IllegalLocationConstraintException", 400)
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("regional"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "eu-west-1"}})
	wantCode(t, err, "IllegalLocationConstraintException", 400)
	in := &s3.CreateBucketInput{Bucket: aws.String("regional"),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: "eu-central-1"}}
	if _, err := c.CreateBucket(ctx, in); err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateBucket(ctx, in)
	wantCode(t, err, "BucketAlreadyOwnedByYou", 409)
}

func TestObjects(t *testing.T) {
	t.Parallel()
	c, ctx := newBucket(t, "objects")
	out := put(t, c, &s3.PutObjectInput{Bucket: aws.String("objects"), Key: aws.String("dir/a b.json"), Body: strings.NewReader(`{"n":1}`),
		ContentType: aws.String("application/json"), Metadata: map[string]string{"origin": "writer"}, Tagging: aws.String("state=uncommitted&kind=claim")})
	if md := md5.Sum([]byte(`{"n":1}`)); aws.ToString(out.ETag) != `"`+hex.EncodeToString(md[:])+`"` {
		t.Fatalf("ETag = %q", aws.ToString(out.ETag))
	}
	body, got := read(t, c, &s3.GetObjectInput{Bucket: aws.String("objects"), Key: aws.String("dir/a b.json")})
	if string(body) != `{"n":1}` || aws.ToString(got.ContentType) != "application/json" || got.Metadata["origin"] != "writer" ||
		aws.ToInt32(got.TagCount) != 2 || aws.ToString(got.ETag) != aws.ToString(out.ETag) || aws.ToInt64(got.ContentLength) != 7 {
		t.Fatalf("GetObject = %q %+v", body, got)
	}
	part, ranged := read(t, c, &s3.GetObjectInput{Bucket: aws.String("objects"), Key: aws.String("dir/a b.json"), Range: aws.String("bytes=1-3")})
	if string(part) != `"n"` || aws.ToString(ranged.ContentRange) != "bytes 1-3/7" {
		t.Fatalf("ranged GetObject = %q, %v", part, aws.ToString(ranged.ContentRange))
	}
	_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("objects"), Key: aws.String("dir/a b.json"), Range: aws.String("bytes=7-")})
	wantCode(t, err, "InvalidRange", 416)
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("objects"), Key: aws.String("dir/a b.json")})
	if err != nil || aws.ToInt64(head.ContentLength) != 7 || head.LastModified == nil || head.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		t.Fatalf("HeadObject = %+v, %v", head, err)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("objects"), Key: aws.String("none")})
	wantCode(t, err, "NoSuchKey", 404)
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("objects"), Key: aws.String("none")})
	wantCode(t, err, "NotFound", 404)
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("nobucket"), Key: aws.String("k")})
	wantCode(t, err, "NoSuchBucket", 404)
	testTagging(t, c)
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("objects"), Key: aws.String("never-there")}); err != nil {
		t.Fatalf("DeleteObject of a missing key = %v, want success", err)
	}
}

func testTagging(t *testing.T, c *s3.Client) {
	ctx, key := context.Background(), aws.String("dir/a b.json")
	tags, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("objects"), Key: key})
	if err != nil || len(tags.TagSet) != 2 || aws.ToString(tags.TagSet[0].Key) != "kind" || aws.ToString(tags.TagSet[1].Value) != "uncommitted" {
		t.Fatalf("GetObjectTagging = %+v, %v", tags, err)
	}
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("objects"), Key: key,
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("state"), Value: aws.String("committed")}}}}); err != nil {
		t.Fatal(err)
	}
	tags, err = c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("objects"), Key: key})
	if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Value) != "committed" {
		t.Fatalf("GetObjectTagging after put = %+v, %v", tags, err)
	}
	eleven := make([]types.Tag, 11)
	for i := range eleven {
		eleven[i] = types.Tag{Key: aws.String(string(rune('a' + i))), Value: aws.String("v")}
	}
	_, err = c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("objects"), Key: key, Tagging: &types.Tagging{TagSet: eleven}})
	wantCode(t, err, "BadRequest", 400)
	if _, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: aws.String("objects"), Key: key}); err != nil {
		t.Fatal(err)
	}
	tags, err = c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("objects"), Key: key})
	if err != nil || len(tags.TagSet) != 0 {
		t.Fatalf("GetObjectTagging after delete = %+v, %v", tags, err)
	}
	_, err = c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("objects"), Key: aws.String("none"), Tagging: &types.Tagging{TagSet: []types.Tag{}}})
	wantCode(t, err, "NoSuchKey", 404)
}

func TestListAndDeleteObjects(t *testing.T) {
	t.Parallel()
	c, ctx := newBucket(t, "listing")
	keys := []string{"a/1", "a/2", "a/3", "b/1", "b/x/1", "c", "d"}
	for _, k := range keys {
		put(t, c, &s3.PutObjectInput{Bucket: aws.String("listing"), Key: aws.String(k), Body: strings.NewReader(k)})
	}
	var seen []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("listing"), MaxKeys: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToInt32(page.KeyCount) > 2 {
			t.Fatalf("page of %d keys, max-keys 2", aws.ToInt32(page.KeyCount))
		}
		for _, o := range page.Contents {
			seen = append(seen, aws.ToString(o.Key))
		}
	}
	if strings.Join(seen, ",") != strings.Join(keys, ",") {
		t.Fatalf("paged keys = %v, want %v", seen, keys)
	}
	var entries []string
	p = s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("listing"), Delimiter: aws.String("/"), MaxKeys: aws.Int32(1)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, cp := range page.CommonPrefixes {
			entries = append(entries, aws.ToString(cp.Prefix))
		}
		for _, o := range page.Contents {
			entries = append(entries, aws.ToString(o.Key))
		}
	}
	if strings.Join(entries, ",") != "a/,b/,c,d" {
		t.Fatalf("delimited listing = %v", entries)
	}
	sub, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("listing"), Prefix: aws.String("b/"), Delimiter: aws.String("/")})
	if err != nil || len(sub.Contents) != 1 || aws.ToString(sub.Contents[0].Key) != "b/1" || len(sub.CommonPrefixes) != 1 ||
		aws.ToString(sub.CommonPrefixes[0].Prefix) != "b/x/" || aws.ToInt64(sub.Contents[0].Size) != 3 {
		t.Fatalf("ListObjectsV2 prefix b/ = %+v, %v", sub, err)
	}
	_, err = c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("listing"), ContinuationToken: aws.String("!!")})
	wantCode(t, err, "InvalidArgument", 400)
	del, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("listing"), Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String("a/1")}, {Key: aws.String("a/2")}, {Key: aws.String("nothing")}}}})
	if err != nil || len(del.Deleted) != 3 || len(del.Errors) != 0 {
		t.Fatalf("DeleteObjects = %+v, %v", del, err)
	}
	left, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("listing"), Prefix: aws.String("a/")})
	if err != nil || aws.ToInt32(left.KeyCount) != 1 || aws.ToString(left.Contents[0].Key) != "a/3" {
		t.Fatalf("after DeleteObjects = %+v, %v", left, err)
	}
}

func TestChecksumsAndLargeObjects(t *testing.T) {
	t.Parallel()
	c, ctx := newBucket(t, "sums")
	data := make([]byte, 10<<20)
	_, _ = rand.Read(data)
	sum := sha256.Sum256(data)
	b64 := base64.StdEncoding.EncodeToString(sum[:])
	out := put(t, c, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String("big"), Body: bytes.NewReader(data), ChecksumSHA256: aws.String(b64)})
	if aws.ToString(out.ChecksumSHA256) != b64 {
		t.Fatalf("PutObject ChecksumSHA256 = %q, want %q", aws.ToString(out.ChecksumSHA256), b64)
	}
	got, obj := read(t, c, &s3.GetObjectInput{Bucket: aws.String("sums"), Key: aws.String("big"), ChecksumMode: types.ChecksumModeEnabled})
	if !bytes.Equal(got, data) || aws.ToString(obj.ChecksumSHA256) != b64 {
		t.Fatalf("GetObject of 10 MB: %d bytes, equal %v, checksum %q", len(got), bytes.Equal(got, data), aws.ToString(obj.ChecksumSHA256))
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String("big"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil || aws.ToString(head.ChecksumSHA256) != b64 || aws.ToInt64(head.ContentLength) != int64(len(data)) {
		t.Fatalf("HeadObject = %+v, %v", head, err)
	}
	plain, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String("big")})
	if err != nil || plain.ChecksumSHA256 != nil {
		t.Fatalf("HeadObject without checksum mode = %v, %v; want no checksum", aws.ToString(plain.ChecksumSHA256), err)
	}
	wrong := sha256.Sum256([]byte("other"))
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String("bad"), Body: strings.NewReader("data"),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(wrong[:]))})
	wantCode(t, err, "BadDigest", 400)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String("bad"), Body: strings.NewReader("data"),
		ContentMD5: aws.String("1B2M2Y8AsgTpgAmY7PhCfg==")})
	wantCode(t, err, "BadDigest", 400)
	// The SDK's default: a CRC32 computed and sent in a header over HTTP.
	put(t, c, &s3.PutObjectInput{Bucket: aws.String("sums"), Key: aws.String("crc"), Body: strings.NewReader("data")})
	_, crc := read(t, c, &s3.GetObjectInput{Bucket: aws.String("sums"), Key: aws.String("crc"), ChecksumMode: types.ChecksumModeEnabled})
	if aws.ToString(crc.ChecksumCRC32) == "" {
		t.Fatal("GetObject of an object put with the SDK's default CRC32 returned no ChecksumCRC32")
	}
}

// TestAWSChunkedOverTLS: over HTTPS the SDK streams PutObject as
// aws-chunked with a trailing CRC32 (STREAMING-UNSIGNED-PAYLOAD-TRAILER).
func TestAWSChunkedOverTLS(t *testing.T) {
	t.Parallel()
	s := localawstest.Start(t)
	var chunked atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
			chunked.Add(1)
		}
		s.Router().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cfg := config(s)
	cfg.BaseEndpoint, cfg.HTTPClient = aws.String(srv.URL), srv.Client()
	c := s3.NewFromConfig(cfg)
	mustBucket(t, c, "chunked")
	data := bytes.Repeat([]byte("0123456789abcdef"), 700_000) // 11.2 MB
	put(t, c, &s3.PutObjectInput{Bucket: aws.String("chunked"), Key: aws.String("stream"), Body: bytes.NewReader(data)})
	if chunked.Load() == 0 {
		t.Fatal("the SDK sent no aws-chunked request over TLS")
	}
	got, obj := read(t, c, &s3.GetObjectInput{Bucket: aws.String("chunked"), Key: aws.String("stream"), ChecksumMode: types.ChecksumModeEnabled})
	if !bytes.Equal(got, data) || aws.ToString(obj.ChecksumCRC32) == "" {
		t.Fatalf("GetObject: %d bytes (want %d), CRC32 %q", len(got), len(data), aws.ToString(obj.ChecksumCRC32))
	}
	head, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("chunked"), Key: aws.String("stream")})
	if err != nil || aws.ToString(head.ContentEncoding) != "" {
		t.Fatalf("HeadObject = Content-Encoding %q, %v; aws-chunked must not be stored", aws.ToString(head.ContentEncoding), err)
	}
}

// TestVirtualHostedStyle: with a host name endpoint the SDK names the
// bucket in the Host (bucket.localhost:port).
func TestVirtualHostedStyle(t *testing.T) {
	t.Parallel()
	s := localawstest.Start(t)
	var hosts atomic.Value
	addr := strings.TrimPrefix(s.Endpoint(), "http://")
	transport := &http.Transport{DialContext: func(ctx context.Context, network, host string) (net.Conn, error) {
		hosts.Store(host)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(transport.CloseIdleConnections)
	cfg := config(s)
	cfg.BaseEndpoint = aws.String("http://localhost:" + strings.Split(addr, ":")[1])
	cfg.HTTPClient = &http.Client{Transport: transport}
	c, ctx := s3.NewFromConfig(cfg), context.Background()
	mustBucket(t, c, "virtual")
	put(t, c, &s3.PutObjectInput{Bucket: aws.String("virtual"), Key: aws.String("k/v"), Body: strings.NewReader("hosted")})
	if h, _ := hosts.Load().(string); !strings.HasPrefix(h, "virtual.localhost:") {
		t.Fatalf("dialed %q, want the virtual-hosted virtual.localhost", h)
	}
	body, _ := read(t, c, &s3.GetObjectInput{Bucket: aws.String("virtual"), Key: aws.String("k/v")})
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("virtual")})
	if string(body) != "hosted" || err != nil || aws.ToInt32(list.KeyCount) != 1 {
		t.Fatalf("virtual-hosted read %q, list %+v, %v", body, list, err)
	}
	path := client(s)
	body, _ = read(t, path, &s3.GetObjectInput{Bucket: aws.String("virtual"), Key: aws.String("k/v")})
	if string(body) != "hosted" {
		t.Fatalf("path-style read of a virtual-hosted put = %q", body)
	}
}

func TestServerSideEncryption(t *testing.T) {
	t.Parallel()
	c, ctx := newBucket(t, "sse")
	enc, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String("sse")})
	if err != nil || enc.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm != types.ServerSideEncryptionAes256 {
		t.Fatalf("default GetBucketEncryption = %+v, %v", enc, err)
	}
	out := put(t, c, &s3.PutObjectInput{Bucket: aws.String("sse"), Key: aws.String("kms"), Body: strings.NewReader("x"),
		ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String("1234abcd-12ab-34cd-56ef-1234567890ab")})
	keyArn := "arn:aws:kms:us-east-1:000000000000:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	if out.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(out.SSEKMSKeyId) != keyArn {
		t.Fatalf("PutObject SSE = %v %q", out.ServerSideEncryption, aws.ToString(out.SSEKMSKeyId))
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sse"), Key: aws.String("kms")})
	if err != nil || head.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(head.SSEKMSKeyId) != keyArn {
		t.Fatalf("HeadObject SSE = %+v, %v", head, err)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("sse"), Key: aws.String("bad"), Body: strings.NewReader("x"),
		ServerSideEncryption: "rot13"})
	wantCode(t, err, "InvalidArgument", 400)
	if _, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: aws.String("sse"),
		ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{
			ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String(keyArn)},
			BucketKeyEnabled:                   aws.Bool(true)}}}}); err != nil {
		t.Fatal(err)
	}
	dflt := put(t, c, &s3.PutObjectInput{Bucket: aws.String("sse"), Key: aws.String("default"), Body: strings.NewReader("x")})
	if dflt.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(dflt.SSEKMSKeyId) != keyArn || !aws.ToBool(dflt.BucketKeyEnabled) {
		t.Fatalf("PutObject under a KMS default = %v %q %v", dflt.ServerSideEncryption, aws.ToString(dflt.SSEKMSKeyId), aws.ToBool(dflt.BucketKeyEnabled))
	}
}

const tlsOnly = `{"Version":"2012-10-17","Statement":[{"Sid":"TLSOnly","Effect":"Deny","Principal":"*","Action":"s3:*",
"Resource":["arn:aws:s3:::guarded","arn:aws:s3:::guarded/*"],"Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`

func TestBucketPolicyAndPublicAccessBlock(t *testing.T) {
	t.Parallel()
	s := localawstest.Start(t)
	c, ctx := client(s), context.Background()
	mustBucket(t, c, "guarded")
	pab, err := c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String("guarded")})
	if err != nil || !aws.ToBool(pab.PublicAccessBlockConfiguration.BlockPublicPolicy) {
		t.Fatalf("a new bucket's public access block = %+v, %v; want all settings on", pab, err)
	}
	_, err = c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("guarded")})
	wantCode(t, err, "NoSuchBucketPolicy", 404)
	if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("guarded"), Policy: aws.String(tlsOnly)}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("guarded")})
	if err != nil || !strings.Contains(aws.ToString(got.Policy), "aws:SecureTransport") {
		t.Fatalf("GetBucketPolicy = %v, %v", got, err)
	}
	put(t, c, &s3.PutObjectInput{Bucket: aws.String("guarded"), Key: aws.String("k"), Body: strings.NewReader("x")})
	insecure := client(s, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue("X-Forwarded-Proto", "http"))
	})
	_, err = insecure.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("guarded"), Key: aws.String("k")})
	wantCode(t, err, "AccessDenied", 403)
	_, err = insecure.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("guarded"), Key: aws.String("k2"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied", 403)
	public := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::guarded/*"}]}`
	_, err = c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("guarded"), Policy: aws.String(public)})
	wantCode(t, err, "AccessDenied", 403)
	_, err = c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("guarded"), Policy: aws.String(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::other/*"}]}`)})
	wantCode(t, err, "MalformedPolicy", 400)
	if _, err := c.DeletePublicAccessBlock(ctx, &s3.DeletePublicAccessBlockInput{Bucket: aws.String("guarded")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String("guarded")})
	wantCode(t, err, "NoSuchPublicAccessBlockConfiguration", 404)
	if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("guarded"), Policy: aws.String(public)}); err != nil {
		t.Fatalf("a public policy without the block = %v", err)
	}
	if _, err := c.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: aws.String("guarded")}); err != nil {
		t.Fatal(err)
	}
	if _, err := insecure.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("guarded"), Key: aws.String("k")}); err != nil {
		t.Fatalf("GetObject over plain HTTP without the policy = %v", err)
	}
}

func TestLifecycleExpiresByTag(t *testing.T) {
	t.Parallel()
	clk := localawstest.NewClock(time.Date(2026, 3, 1, 15, 30, 0, 0, time.UTC))
	s := localawstest.StartEmpty(t)
	s.Env().Now = clk.Now
	svc := locals3.New(s.Env(), locals3.Options{LifecycleSweepInterval: 5 * time.Millisecond})
	localawstest.Serve(t, s, svc)
	c, ctx := client(s), context.Background()
	mustBucket(t, c, "expiring")
	_, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("expiring")})
	wantCode(t, err, "NoSuchLifecycleConfiguration", 404)
	rule := func(days int32) *s3.PutBucketLifecycleConfigurationInput {
		return &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String("expiring"), LifecycleConfiguration: &types.BucketLifecycleConfiguration{
			Rules: []types.LifecycleRule{{ID: aws.String("uncommitted"), Status: types.ExpirationStatusEnabled,
				Filter:     &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{Prefix: aws.String("claims/"), Tags: []types.Tag{{Key: aws.String("state"), Value: aws.String("uncommitted")}}}},
				Expiration: &types.LifecycleExpiration{Days: aws.Int32(days)}}}}}
	}
	_, err = c.PutBucketLifecycleConfiguration(ctx, rule(0))
	wantCode(t, err, "InvalidArgument", 400)
	if _, err := c.PutBucketLifecycleConfiguration(ctx, rule(1)); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("expiring")})
	if err != nil || len(got.Rules) != 1 || got.Rules[0].Filter.And == nil || aws.ToString(got.Rules[0].Filter.And.Tags[0].Value) != "uncommitted" {
		t.Fatalf("GetBucketLifecycleConfiguration = %+v, %v", got, err)
	}
	put(t, c, &s3.PutObjectInput{Bucket: aws.String("expiring"), Key: aws.String("claims/a"), Body: strings.NewReader("a"), Tagging: aws.String("state=uncommitted")})
	put(t, c, &s3.PutObjectInput{Bucket: aws.String("expiring"), Key: aws.String("claims/b"), Body: strings.NewReader("b"), Tagging: aws.String("state=committed")})
	put(t, c, &s3.PutObjectInput{Bucket: aws.String("expiring"), Key: aws.String("other/c"), Body: strings.NewReader("c"), Tagging: aws.String("state=uncommitted")})
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("expiring"), Key: aws.String("claims/a")})
	// Created 2026-03-01 15:30 + 1 day, rounded up to the next midnight UTC.
	if err != nil || aws.ToString(head.Expiration) != `expiry-date="Tue, 03 Mar 2026 00:00:00 GMT", rule-id="uncommitted"` {
		t.Fatalf("HeadObject Expiration = %q, %v", aws.ToString(head.Expiration), err)
	}
	clk.Advance(32 * time.Hour) // 2026-03-02 23:30: not yet.
	if n := svc.SweepLifecycle(); n != 0 {
		t.Fatalf("SweepLifecycle before the expiry deleted %d objects", n)
	}
	clk.Advance(time.Hour)
	localawstest.Eventually(t, 10*time.Second, "claims/a to be expired by the background sweep", func() bool {
		_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("expiring"), Key: aws.String("claims/a")})
		return localawstest.ErrorCode(err) == "NotFound"
	})
	for _, k := range []string{"claims/b", "other/c"} {
		if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("expiring"), Key: aws.String(k)}); err != nil {
			t.Fatalf("%s outside the rule's filter expired: %v", k, err)
		}
	}
	if _, err := c.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String("expiring")}); err != nil {
		t.Fatal(err)
	}
}

// TestConditionalWrites: If-None-Match "*" refuses to overwrite, If-Match
// requires the current ETag, and a wrong expected bucket owner is denied.
func TestConditionalWrites(t *testing.T) {
	t.Parallel()
	c, ctx := newBucket(t, "once")
	first := put(t, c, &s3.PutObjectInput{Bucket: aws.String("once"), Key: aws.String("k"), Body: strings.NewReader("1"), IfNoneMatch: aws.String("*")})
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("once"), Key: aws.String("k"), Body: strings.NewReader("2"), IfNoneMatch: aws.String("*")})
	wantCode(t, err, "PreconditionFailed", 412)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("once"), Key: aws.String("k"), Body: strings.NewReader("2"), IfMatch: aws.String(`"0"`)})
	wantCode(t, err, "PreconditionFailed", 412)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("once"), Key: aws.String("new"), Body: strings.NewReader("2"), IfMatch: first.ETag})
	wantCode(t, err, "NoSuchKey", 404)
	put(t, c, &s3.PutObjectInput{Bucket: aws.String("once"), Key: aws.String("k"), Body: strings.NewReader("2"), IfMatch: first.ETag})
	if body, _ := read(t, c, &s3.GetObjectInput{Bucket: aws.String("once"), Key: aws.String("k")}); string(body) != "2" {
		t.Fatalf("after the If-Match put: %q", body)
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("once"), Key: aws.String("k"), ExpectedBucketOwner: aws.String("111122223333")})
	wantCode(t, err, "AccessDenied", 403)
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("once"), Key: aws.String("k"), ExpectedBucketOwner: aws.String("000000000000")}); err != nil {
		t.Fatalf("HeadObject with the right owner: %v", err)
	}
}
