package differential_test

// Documentation cited by the S3 decisions.
const (
	s3API   = "https://docs.aws.amazon.com/AmazonS3/latest/API/"
	s3Guide = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/"
)

// s3ChecksumLists are the listing steps whose first entry was put with a
// SHA-256 checksum.
var s3ChecksumLists = []string{"ListObjectsV2", "ListObjectsV2 delimiter", "ListObjectsV2 page"}

var s3Decisions = []decision{
	{Scenario: "s3/buckets", Paths: []string{"CreateBucket invalid name/*"},
		Verdict: motoWrong, Ours: "InvalidBucketName (400)", Moto: "creates a bucket named Diff_Bad",
		Why: "General purpose bucket names consist only of lowercase letters, numbers, dots and hyphens; CreateBucket refuses other names with InvalidBucketName.", Source: s3Guide + "bucketnamingrules.html"},
	{Scenario: "s3/buckets", Paths: []string{"GetBucketEncryption default/*"},
		Verdict: motoWrong, Ours: "SSE-S3 (AES256) with BucketKeyEnabled false", Moto: "ServerSideEncryptionConfigurationNotFoundError (404)",
		Why: "Every bucket has default encryption since January 2023: SSE-S3 unless configured otherwise, which GetBucketEncryption returns.", Source: s3Guide + "default-bucket-encryption.html"},
	{Scenario: "s3/buckets", Paths: []string{"PutBucketPolicy malformed"},
		Verdict: motoWrong, Ours: "MalformedPolicy (400)", Moto: "stores the document",
		Why: "A bucket policy is a JSON policy document; S3 refuses one that does not parse with MalformedPolicy.", Source: s3API + "ErrorResponses.html"},
	{Scenario: "s3/buckets", Paths: []string{"PutBucketLifecycleConfiguration/TransitionDefaultMinimumObjectSize"},
		Verdict: motoWrong, Ours: "all_storage_classes_128K", Moto: "none",
		Why: "PutBucketLifecycleConfiguration answers with x-amz-transition-default-minimum-object-size, all_storage_classes_128K unless set (moto sends it on Get only).", Source: s3API + "API_PutBucketLifecycleConfiguration.html"},
	{Scenario: "s3/buckets", Paths: []string{"PutBucketLifecycleConfiguration zero days/*"},
		Verdict: motoWrong, Ours: "InvalidArgument (400)", Moto: "stores the rule",
		Why: "Expiration Days must be a non-zero positive integer.", Source: s3API + "API_LifecycleExpiration.html"},
	{Scenario: "s3/buckets", Paths: []string{"ListBuckets/Buckets[0].BucketRegion", "ListBuckets/Prefix"},
		Verdict: motoWrong, Ours: "each bucket's BucketRegion, and the Prefix the request sent", Moto: "neither",
		Why: "ListBuckets returns BucketRegion for each bucket and echoes the Prefix sent with the request.", Source: s3API + "API_ListBuckets.html"},
	{Scenario: "s3/buckets", Paths: []string{"ListBuckets/Owner.ID", "ListBuckets/Owner.DisplayName"},
		Verdict: unspecified, Ours: "a 64-digit hex canonical user id, no DisplayName", Moto: "a 32-digit id and DisplayName webfile",
		Why: "The owner's canonical user id is an opaque identifier of the account; S3 no longer returns DisplayName.", Source: s3API + "API_Owner.html"},
	{Scenario: "s3/objects", Paths: []string{"PutObject/ChecksumSHA256", "PutObject/ChecksumType", "GetObject/ChecksumSHA256", "GetObject/ChecksumType",
		"HeadObject/ChecksumSHA256", "HeadObject/ChecksumType"},
		Verdict: motoWrong, Ours: "the object's SHA-256 checksum, type FULL_OBJECT", Moto: "no checksum",
		Why: "An object put with x-amz-checksum-sha256 keeps it; PutObject returns it, and GetObject and HeadObject return it with x-amz-checksum-mode ENABLED.", Source: s3Guide + "checking-object-integrity.html"},
	{Scenario: "s3/objects", Paths: []string{"PutObject wrong checksum/*"},
		Verdict: motoWrong, Ours: "BadDigest (400)", Moto: "stores the object",
		Why: "S3 computes the checksum of the data it receives and refuses the request when it differs from the one sent.", Source: s3Guide + "checking-object-integrity.html"},
	{Scenario: "s3/objects", Paths: []string{"PutObject claims/*ServerSideEncryption",
		"PutObject other.txt/ServerSideEncryption", "HeadObject plain/ServerSideEncryption", "multi *ServerSideEncryption", "small *ServerSideEncryption"},
		Verdict: motoWrong, Ours: "AES256", Moto: "none",
		Why: "Since January 2023 S3 encrypts every new object with SSE-S3 when no other encryption applies, and says so in x-amz-server-side-encryption.", Source: s3Guide + "default-encryption-faq.html"},
	{Scenario: "s3/objects", Paths: paths(s3ChecksumLists, "/Contents[0].ChecksumAlgorithm", "/Contents[0].ChecksumType"),
		Verdict: motoWrong, Ours: "ChecksumAlgorithm SHA256, ChecksumType FULL_OBJECT for the object put with a checksum", Moto: "neither",
		Why: "A listed Object carries the algorithm used to create its checksum and the checksum's type.", Source: s3API + "API_Object.html"},
	{Scenario: "s3/objects", Paths: []string{"multi CompleteMultipartUpload/Location"},
		Verdict: unspecified, Ours: "the object's URL at the stack's endpoint", Moto: "its URL at AWS's virtual-hosted endpoint",
		Why: "Location is the URI that identifies the new object; the stack answers with the endpoint the object was uploaded to, which is the one a client can reach.", Source: s3API + "API_CompleteMultipartUpload.html"},
	{Scenario: "s3/objects", Paths: []string{"multi CompleteMultipartUpload/VersionId"},
		Verdict: motoWrong, Ours: "no VersionId", Moto: `VersionId "null"`,
		Why: "CompleteMultipartUpload returns the version id of the new object only when the bucket has versioning turned on.", Source: s3API + "API_CompleteMultipartUpload.html"},
	{Scenario: "s3/objects", Paths: []string{"ListObjectsV2 page #2/ContinuationToken"},
		Verdict: motoWrong, Ours: "echoes the ContinuationToken sent", Moto: "none",
		Why: "If ContinuationToken was sent with the request, it is included in the response.", Source: s3API + "API_ListObjectsV2.html"},
}
