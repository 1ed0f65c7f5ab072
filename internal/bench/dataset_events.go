package bench

import (
	"math/bits"
	"strconv"
	"time"
)

// eventsDataset is an event log in the style of the GitHub archive
// (gharchive.org): one JSON object per row with the event's id, type,
// actor, repository, a type-specific payload, public and created_at. Keys
// are ids, and created_at grows with the id (20 events a second from
// 2015-01-01), as in a log appended in time order.
//
// What makes it compress like the real thing is reproduced rather than
// copied: field names and URL prefixes repeat in every record; logins
// appear in several URLs of the same record; a skewed minority of actors
// and repositories produce most events (bots, busy projects), so
// neighbouring records share names; commit SHAs are random hex (the
// incompressible part); messages and titles are drawn from a small
// vocabulary. Values are 300 to about 1500 bytes and compress 3–6x with
// zstd on 16 KiB pages, like real event logs.
//
// Records are built by appending to the caller's buffer from a per-row
// splitmix64 stream: no maps, no reflection, no allocation.
type eventsDataset struct {
	key uint64
}

func newEventsDataset(seed uint64) *eventsDataset {
	return &eventsDataset{key: mix64(seed ^ 0x6576656e74732121)}
}

func (d *eventsDataset) Name() string { return "events" }

func (d *eventsDataset) AppendKey(dst []byte, id uint64) []byte { return appendKey(dst, id) }

const (
	eventsPerSecond = 20
	eventIDBase     = 2489651045 // gharchive's first event of 2015
	actorPool       = 200_000
	repoPool        = 400_000
)

var eventsEpoch = time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

// eventTypes and their cumulative weights out of 100, roughly the mix of a
// gharchive hour.
var eventTypes = [...]struct {
	name   string
	cumPct uint64
}{
	{"PushEvent", 50},
	{"CreateEvent", 64},
	{"WatchEvent", 76},
	{"IssueCommentEvent", 83},
	{"PullRequestEvent", 89},
	{"IssuesEvent", 94},
	{"ForkEvent", 97},
	{"DeleteEvent", 100},
}

func (d *eventsDataset) AppendValue(dst []byte, id, version uint64) []byte {
	// The row's own stream; an update (version ≠ 0) keeps the event's
	// identity (id, time) and redraws the rest.
	g := eventGen{s: mix64(d.key ^ mix64(id) ^ mix64(version+0x9e3779b97f4a7c15)), key: d.key}

	typ := g.below(100)
	ti := 0
	for typ >= eventTypes[ti].cumPct {
		ti++
	}
	actor := g.skewed(actorPool)
	repo := g.skewed(repoPool)

	dst = append(dst, `{"id":"`...)
	dst = strconv.AppendUint(dst, eventIDBase+id, 10)
	dst = append(dst, `","type":"`...)
	dst = append(dst, eventTypes[ti].name...)
	dst = append(dst, `","actor":`...)
	dst = g.appendUser(dst, actor, true)
	dst = append(dst, `,"repo":{"id":`...)
	dst = strconv.AppendUint(dst, g.repoID(repo), 10)
	dst = append(dst, `,"name":"`...)
	dst = g.appendRepoName(dst, repo)
	dst = append(dst, `","url":"https://api.github.com/repos/`...)
	dst = g.appendRepoName(dst, repo)
	dst = append(dst, `"},"payload":`...)
	switch eventTypes[ti].name {
	case "PushEvent":
		dst = g.appendPush(dst, id, actor, repo)
	case "CreateEvent":
		dst = g.appendCreate(dst)
	case "WatchEvent":
		dst = append(dst, `{"action":"started"}`...)
	case "IssueCommentEvent":
		dst = g.appendIssueComment(dst, repo)
	case "PullRequestEvent":
		dst = g.appendPullRequest(dst, repo, actor)
	case "IssuesEvent":
		dst = g.appendIssues(dst, repo, actor)
	case "ForkEvent":
		dst = g.appendFork(dst, repo)
	case "DeleteEvent":
		dst = append(dst, `{"ref":"`...)
		dst = g.appendBranch(dst)
		dst = append(dst, `","ref_type":"branch","pusher_type":"user"}`...)
	}
	dst = append(dst, `,"public":true,"created_at":"`...)
	dst = time.Unix(eventsEpoch+int64(id/eventsPerSecond), 0).UTC().AppendFormat(dst, time.RFC3339)
	return append(dst, `"}`...)
}

// eventGen is one record's random stream. Names derived from an actor or
// repository index use the data set key alone, so the same actor has the
// same login in every record.
type eventGen struct {
	s, key uint64
}

func (g *eventGen) next() uint64 {
	g.s += 0x9e3779b97f4a7c15
	return mix64(g.s)
}

// below returns a uniform integer in [0, n).
func (g *eventGen) below(n uint64) uint64 {
	hi, _ := bits.Mul64(g.next(), n)
	return hi
}

// skewed returns an index in [0, n) where low indexes are far more likely
// (density ∝ x^(-3/4)): a few percent of actors make half the events.
func (g *eventGen) skewed(n uint64) uint64 {
	u := float64(g.next()>>11) / (1 << 53)
	return min(uint64(u*u*u*u*float64(n)), n-1)
}

func (g *eventGen) actorID(actor uint64) uint64 {
	return 1000 + mix64(g.key^actor)%12_000_000
}

func (g *eventGen) repoID(repo uint64) uint64 {
	return 10_000 + mix64(g.key^repo^0x7265706f)%30_000_000
}

var syllables = [...]string{
	"ka", "ro", "mi", "dev", "an", "li", "jo", "sam", "el", "ta", "ni", "ko",
	"ma", "ri", "chen", "wang", "li", "zh", "ev", "ol", "ax", "ter", "son",
	"mar", "tin", "ben", "lu", "ca", "de", "ja", "pe", "to", "hub", "bot",
	"code", "yu", "xi", "ha", "na", "sa",
}

// appendLogin appends the login of actor: two to four syllables, and
// digits for some.
func (g *eventGen) appendLogin(dst []byte, actor uint64) []byte {
	h := mix64(g.key ^ actor ^ 0x6c6f67696e)
	n := 2 + h%3
	h /= 3
	for range n {
		dst = append(dst, syllables[h%uint64(len(syllables))]...)
		h /= uint64(len(syllables))
	}
	if h%4 == 0 {
		dst = strconv.AppendUint(dst, (h/4)%1000, 10)
	}
	return dst
}

// appendUser appends an actor object; withGravatar is the shape of the
// top-level actor (gravatar_id and avatar_url), the other the nested user
// of issues and forks.
func (g *eventGen) appendUser(dst []byte, actor uint64, top bool) []byte {
	aid := g.actorID(actor)
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendUint(dst, aid, 10)
	dst = append(dst, `,"login":"`...)
	dst = g.appendLogin(dst, actor)
	if top {
		dst = append(dst, `","gravatar_id":"`...)
	}
	dst = append(dst, `","url":"https://api.github.com/users/`...)
	dst = g.appendLogin(dst, actor)
	dst = append(dst, `","avatar_url":"https://avatars.githubusercontent.com/u/`...)
	dst = strconv.AppendUint(dst, aid, 10)
	dst = append(dst, `?"}`...)
	return dst
}

var repoWords = [...]string{
	"dotfiles", "blog", "api", "server", "client", "web", "app", "core",
	"utils", "tools", "docs", "site", "test", "demo", "lib", "sdk", "cli",
	"engine", "parser", "bot", "react", "node", "go", "rust", "python",
	"android", "ios", "kernel", "config", "scripts", "homework", "game",
	"tutorial", "starter", "plugin", "theme", "data", "ml", "compiler", "db",
}

// appendRepoName appends "owner/name": the owner is an actor tied to the
// repository, the name one or two words.
func (g *eventGen) appendRepoName(dst []byte, repo uint64) []byte {
	h := mix64(g.key ^ repo ^ 0x6e616d65)
	dst = g.appendLogin(dst, h%actorPool)
	h /= actorPool
	dst = append(dst, '/')
	dst = append(dst, repoWords[h%uint64(len(repoWords))]...)
	h /= uint64(len(repoWords))
	if h%2 == 0 {
		dst = append(dst, '-')
		dst = append(dst, repoWords[(h/2)%uint64(len(repoWords))]...)
	}
	return dst
}

var words = [...]string{
	"fix", "add", "update", "remove", "refactor", "merge", "bump", "initial",
	"commit", "readme", "tests", "test", "docs", "build", "typo", "bug", "in",
	"the", "for", "to", "of", "and", "with", "support", "config", "version",
	"dependencies", "release", "api", "error", "handling", "when", "on",
	"page", "user", "login", "style", "css", "layout", "issue", "branch",
	"master", "pull", "request", "from", "new", "feature", "cleanup",
	"code", "minor", "changes", "improve", "performance", "memory", "leak",
	"crash", "windows", "linux", "mac", "script", "travis", "ci", "lint",
	"format", "files", "unused", "imports", "example", "license", "move",
	"rename", "use", "instead", "of", "parser", "server", "client", "cache",
	"database", "query", "index", "data", "model", "view", "controller",
	"route", "handler", "default", "option", "flag", "log", "logging",
}

// appendWords appends n words separated by spaces, the first capitalised.
func (g *eventGen) appendWords(dst []byte, n int) []byte {
	for i := range n {
		w := words[g.below(uint64(len(words)))]
		if i == 0 {
			dst = append(dst, w[0]-'a'+'A')
			dst = append(dst, w[1:]...)
			continue
		}
		dst = append(dst, ' ')
		dst = append(dst, w...)
	}
	return dst
}

const hexDigits = "0123456789abcdef"

func (g *eventGen) appendSHA(dst []byte) []byte {
	for range 2 {
		x := g.next()
		for range 16 {
			dst = append(dst, hexDigits[x&15])
			x >>= 4
		}
	}
	x := g.next()
	for range 8 {
		dst = append(dst, hexDigits[x&15])
		x >>= 4
	}
	return dst
}

var branches = [...]string{"master", "gh-pages", "develop", "dev", "feature", "fix", "patch-1", "patch-2", "release", "test"}

func (g *eventGen) appendBranch(dst []byte) []byte {
	return append(dst, branches[g.below(uint64(len(branches)))]...)
}

func (g *eventGen) appendPush(dst []byte, id, actor, repo uint64) []byte {
	// Mostly one commit, occasionally up to three.
	n := 1 + int(g.skewed(3))
	dst = append(dst, `{"push_id":`...)
	dst = strconv.AppendUint(dst, 536_000_000+id/2, 10)
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, `,"distinct_size":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, `,"ref":"refs/heads/`...)
	dst = g.appendBranch(dst)
	dst = append(dst, `","head":"`...)
	head := len(dst)
	dst = g.appendSHA(dst)
	dst = append(dst, `","before":"`...)
	dst = g.appendSHA(dst)
	dst = append(dst, `","commits":[`...)
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"sha":"`...)
		sha := len(dst)
		if i == n-1 {
			// The last commit is the head.
			dst = append(dst, dst[head:head+40]...)
		} else {
			dst = g.appendSHA(dst)
		}
		dst = append(dst, `","author":{"email":"`...)
		dst = g.appendLogin(dst, actor)
		dst = append(dst, `@users.noreply.github.com","name":"`...)
		dst = g.appendLogin(dst, actor)
		dst = append(dst, `"},"message":"`...)
		dst = g.appendWords(dst, 3+int(g.below(10)))
		dst = append(dst, `","distinct":true,"url":"https://api.github.com/repos/`...)
		dst = g.appendRepoName(dst, repo)
		dst = append(dst, `/commits/`...)
		dst = append(dst, dst[sha:sha+40]...)
		dst = append(dst, `"}`...)
	}
	return append(dst, `]}`...)
}

func (g *eventGen) appendCreate(dst []byte) []byte {
	switch g.below(3) {
	case 0:
		dst = append(dst, `{"ref":null,"ref_type":"repository"`...)
	case 1:
		dst = append(dst, `{"ref":"`...)
		dst = g.appendBranch(dst)
		dst = append(dst, `","ref_type":"branch"`...)
	default:
		dst = append(dst, `{"ref":"v`...)
		dst = strconv.AppendUint(dst, g.below(5), 10)
		dst = append(dst, '.')
		dst = strconv.AppendUint(dst, g.below(20), 10)
		dst = append(dst, '.')
		dst = strconv.AppendUint(dst, g.below(10), 10)
		dst = append(dst, `","ref_type":"tag"`...)
	}
	dst = append(dst, `,"master_branch":"master","description":"`...)
	dst = g.appendWords(dst, 4+int(g.below(12)))
	return append(dst, `","pusher_type":"user"}`...)
}

// appendIssue appends an issue object of repo; kind is "issues" or "pulls".
func (g *eventGen) appendIssue(dst []byte, repo, user uint64, kind string, number uint64, body bool) []byte {
	dst = append(dst, `{"url":"https://api.github.com/repos/`...)
	dst = g.appendRepoName(dst, repo)
	dst = append(dst, '/')
	dst = append(dst, kind...)
	dst = append(dst, '/')
	dst = strconv.AppendUint(dst, number, 10)
	dst = append(dst, `","id":`...)
	dst = strconv.AppendUint(dst, 50_000_000+g.below(10_000_000), 10)
	dst = append(dst, `,"number":`...)
	dst = strconv.AppendUint(dst, number, 10)
	dst = append(dst, `,"title":"`...)
	dst = g.appendWords(dst, 3+int(g.below(8)))
	dst = append(dst, `","user":`...)
	dst = g.appendUser(dst, user, false)
	if g.below(3) == 0 {
		dst = append(dst, `,"state":"closed","locked":false,"comments":`...)
	} else {
		dst = append(dst, `,"state":"open","locked":false,"comments":`...)
	}
	dst = strconv.AppendUint(dst, g.skewed(30), 10)
	if body {
		dst = append(dst, `,"body":"`...)
		dst = g.appendWords(dst, 5+int(g.below(20)))
		dst = append(dst, '"')
	}
	return append(dst, '}')
}

func (g *eventGen) issueNumber() uint64 { return 1 + g.skewed(2000) }

func (g *eventGen) appendIssueComment(dst []byte, repo uint64) []byte {
	dst = append(dst, `{"action":"created","issue":`...)
	dst = g.appendIssue(dst, repo, g.skewed(actorPool), "issues", g.issueNumber(), false)
	dst = append(dst, `,"comment":{"id":`...)
	dst = strconv.AppendUint(dst, 68_000_000+g.below(10_000_000), 10)
	dst = append(dst, `,"body":"`...)
	dst = g.appendWords(dst, 3+int(g.below(25)))
	return append(dst, `"}}`...)
}

func (g *eventGen) appendIssues(dst []byte, repo, actor uint64) []byte {
	if g.below(2) == 0 {
		dst = append(dst, `{"action":"opened","issue":`...)
	} else {
		dst = append(dst, `{"action":"closed","issue":`...)
	}
	dst = g.appendIssue(dst, repo, actor, "issues", g.issueNumber(), true)
	return append(dst, '}')
}

func (g *eventGen) appendPullRequest(dst []byte, repo, actor uint64) []byte {
	number := g.issueNumber()
	if g.below(2) == 0 {
		dst = append(dst, `{"action":"opened","number":`...)
	} else {
		dst = append(dst, `{"action":"closed","number":`...)
	}
	dst = strconv.AppendUint(dst, number, 10)
	dst = append(dst, `,"pull_request":`...)
	dst = g.appendIssue(dst, repo, actor, "pulls", number, true)
	dst = dst[:len(dst)-1] // reopen the object for the pull request fields
	dst = append(dst, `,"merged":false,"commits":`...)
	dst = strconv.AppendUint(dst, 1+g.skewed(20), 10)
	dst = append(dst, `,"additions":`...)
	dst = strconv.AppendUint(dst, g.skewed(2000), 10)
	dst = append(dst, `,"deletions":`...)
	dst = strconv.AppendUint(dst, g.skewed(800), 10)
	dst = append(dst, `,"changed_files":`...)
	dst = strconv.AppendUint(dst, 1+g.skewed(40), 10)
	return append(dst, `}}`...)
}

func (g *eventGen) appendFork(dst []byte, repo uint64) []byte {
	forker := g.skewed(actorPool)
	dst = append(dst, `{"forkee":{"id":`...)
	dst = strconv.AppendUint(dst, 28_000_000+g.below(2_000_000), 10)
	dst = append(dst, `,"full_name":"`...)
	dst = g.appendLogin(dst, forker)
	nameAt := len(dst)
	dst = g.appendRepoName(dst, repo)
	// Keep the repository name after the owner's slash, drop its owner.
	slash := nameAt
	for dst[slash] != '/' {
		slash++
	}
	dst = append(dst[:nameAt], dst[slash:]...)
	dst = append(dst, `","owner":`...)
	dst = g.appendUser(dst, forker, false)
	dst = append(dst, `,"private":false,"fork":true,"forks_count":0,"stargazers_count":0}}`...)
	return dst
}
