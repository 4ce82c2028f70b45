package renderstore

// LibraryBucketOf is the bucket of s called through the C ABI's direct bucket calls,
// even for a store made by New (whose Bucket is the one it was given): a test reaches
// the library's own answers over a Go Bucket that way, the delimiter listing folded
// from the plain listing among them, which no exported call makes for a Go bucket.
func LibraryBucketOf(s *Store) Bucket { return storeBucket{s} }
