package tester

// SetShardHooks sets the hooks of the merges of sharded tests: before,
// when not nil, is called before a set is merged (an error leaves the set
// to merge later, as a crash would); after, when not nil, with the merged
// bundle's directory before it is recomputed.
func SetShardHooks(s *Server, before func(key string) error, after func(dir string)) {
	s.shards.beforeMerge, s.shards.afterMerge = before, after
}
