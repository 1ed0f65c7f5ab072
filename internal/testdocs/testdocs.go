// Package testdocs makes JSON documents for tests of compression: data a
// trained dictionary compresses much better than each page alone.
package testdocs

import (
	"fmt"
	"math/rand/v2"
)

// AppendEvent appends a GitHub-event-like JSON document (as the bench's events
// data set makes): user and repository names drawn from pools of a few
// hundred, so that they repeat across pages but rarely within one; what a
// dictionary pays for.
func AppendEvent(dst []byte, rng *rand.Rand, i int) []byte {
	words := [...]string{"storage", "engine", "compression", "cache", "btree", "index", "query", "stream", "kernel", "driver"}
	user := rng.IntN(300)
	repo := rng.IntN(300)
	userName := fmt.Sprintf("contributor-%d-%s", user, words[user%len(words)])
	repoName := fmt.Sprintf("org-%d/%s-%s", repo%40, words[repo%len(words)], words[(repo/10)%len(words)])
	return fmt.Appendf(dst, `{"id":"%d","type":"%s","actor":{"id":%d,"login":"%s","url":"https://api.github.com/users/%s","avatar_url":"https://avatars.githubusercontent.com/u/%d?"},"repo":{"id":%d,"name":"%s","url":"https://api.github.com/repos/%s"},"payload":{"action":"%s","ref":"refs/heads/%s","ref_type":"branch"},"public":true,"created_at":"2026-12-%02dT%02d:%02d:%02dZ"}`,
		30000000000+i, [...]string{"PushEvent", "WatchEvent", "IssueCommentEvent", "CreateEvent", "PullRequestEvent", "ForkEvent"}[rng.IntN(6)],
		1000+user, userName, userName, 1000+user, 5000+repo, repoName, repoName,
		[...]string{"started", "opened", "closed", "created"}[rng.IntN(4)], words[rng.IntN(len(words))],
		1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60))
}
