package clarify

import (
	"regexp"
	"slices"
	"strings"
)

// Plan is what a planner decides about a request: whether it needs an ADR,
// which architecture categories it touches, and what to ask.
type Plan struct {
	NeedsADR     bool
	Categories   []string // snapshot categories the decision touches, in catalog order
	Questions    []Question
	MissingInfo  []string // semantic keys still unknown (an LLM plan's missing_info)
	DecisionHint string   // why, for the reply; informative only
}

// category is one ADR category of the deterministic planner: the words that
// trigger it and the questions it brings.
type category struct {
	name      string
	triggers  *regexp.Regexp
	questions []Question
}

func words(ws ...string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(` + strings.Join(ws, "|") + `)\b`)
}

func other(id, cat, key, what string) Question {
	return Question{ID: id + "_other", Type: FreeText, Question: "Which " + what + "? (you chose " + Other + ")",
		DependsOn: id, DependsValue: Other, Category: cat, Key: key}
}

// catalog holds the ADR categories' trigger words, each with its questions.
var catalog = []category{
	{name: "Authentication", triggers: words(`auth`, `authentication`, `authn`, `authorization`, `oauth2?`, `sso`, `saml`, `openid`, `oidc`, `jwt`, `sign[- ]?in`, `log[- ]?in`, `login`, `passwordless`),
		questions: []Question{
			{ID: "auth_strategy", Type: SingleChoice, Question: "Which authentication strategy?", Options: []string{"OAuth", "Email/Password", "Magic Links", Other}, Category: "Authentication", Key: "Strategy"},
			{ID: "auth_library", Type: SingleChoice, Question: "Which authentication library or service?", Options: []string{"next-auth", "Passport", "Keycloak", "Auth0", Other}, Category: "Authentication", Key: "Library"},
			other("auth_strategy", "Authentication", "Strategy", "authentication strategy"),
			other("auth_library", "Authentication", "Library", "authentication library or service"),
		}},
	{name: "Database", triggers: words(`database`, `databases`, `db`, `postgres(ql)?`, `mysql`, `mariadb`, `sqlite`, `mongo(db)?`, `orm`, `sql`, `schema migrations?`),
		questions: []Question{
			{ID: "db_type", Type: SingleChoice, Question: "Which database?", Options: []string{"PostgreSQL", "MySQL", "SQLite", "MongoDB", Other}, Category: "Database", Key: "Type"},
			{ID: "db_orm", Type: SingleChoice, Question: "How does the code talk to it?", Options: []string{"Prisma", "Drizzle", "SQLAlchemy", "Raw SQL", Other}, Category: "Database", Key: "ORM"},
			other("db_type", "Database", "Type", "database"),
			other("db_orm", "Database", "ORM", "data-access layer"),
		}},
	{name: "Storage", triggers: words(`storage`, `blob`, `s3`, `object store`, `file uploads?`, `bucket`),
		questions: []Question{
			{ID: "storage_backend", Type: SingleChoice, Question: "Where are files stored?", Options: []string{"Local disk", "S3-compatible object storage", "Google Cloud Storage", "Azure Blob Storage", Other}, Category: "Storage", Key: "Backend"},
			{ID: "storage_access", Type: FreeText, Question: "Who may read the stored files, and how long are they kept?", Optional: true, Category: "Storage", Key: "Access"},
			other("storage_backend", "Storage", "Backend", "storage"),
		}},
	{name: "Cache", triggers: words(`cache`, `caching`, `cached`, `redis`, `memcached?`, `cdn`),
		questions: []Question{
			{ID: "cache_store", Type: SingleChoice, Question: "Which cache?", Options: []string{"Redis", "Memcached", "In-process memory", "CDN / HTTP caching", Other}, Category: "Cache", Key: "Store"},
			{ID: "cache_invalidation", Type: SingleChoice, Question: "How are cached entries invalidated?", Options: []string{"Time to live", "Explicit invalidation on write", "Both", Other}, Category: "Cache", Key: "Invalidation"},
			other("cache_store", "Cache", "Store", "cache"),
		}},
	{name: "Framework", triggers: words(`framework`, `react`, `next\.?js`, `vue`, `svelte`, `angular`, `django`, `flask`, `fastapi`, `rails`, `express`, `spring`),
		questions: []Question{
			{ID: "framework_choice", Type: SingleChoice, Question: "Which framework?", Options: []string{"Next.js", "React (SPA)", "Django", "FastAPI", "Express", Other}, Category: "Framework", Key: "Choice"},
			{ID: "framework_reason", Type: FreeText, Question: "Why this framework (what matters most)?", Optional: true, Category: "Framework", Key: "Rationale"},
			other("framework_choice", "Framework", "Choice", "framework"),
		}},
	{name: "Runtime", triggers: words(`runtime`, `node(\.js)?`, `deno`, `bun`, `python \d`, `jvm`, `wasm`, `webassembly`),
		questions: []Question{
			{ID: "runtime_choice", Type: SingleChoice, Question: "Which runtime?", Options: []string{"Node.js", "Deno", "Bun", "Python", "Go", Other}, Category: "Runtime", Key: "Choice"},
			{ID: "runtime_version", Type: FreeText, Question: "Which version is supported?", Optional: true, Category: "Runtime", Key: "Version"},
			other("runtime_choice", "Runtime", "Choice", "runtime"),
		}},
	{name: "Deployment", triggers: words(`deploy`, `deploys`, `deployment`, `deploying`, `hosting`, `vercel`, `netlify`, `heroku`, `ci/cd`, `release pipeline`),
		questions: []Question{
			{ID: "deploy_target", Type: SingleChoice, Question: "Where does it run?", Options: []string{"Vercel", "Kubernetes", "Containers on a VM", "Serverless functions", Other}, Category: "Deployment", Key: "Target"},
			{ID: "deploy_pipeline", Type: SingleChoice, Question: "What deploys it?", Options: []string{"GitHub Actions", "GitLab CI", "Manual", Other}, Category: "Deployment", Key: "Pipeline"},
			other("deploy_target", "Deployment", "Target", "deployment target"),
			other("deploy_pipeline", "Deployment", "Pipeline", "deployment pipeline"),
		}},
	{name: "Infrastructure", triggers: words(`infrastructure`, `infra`, `terraform`, `pulumi`, `kubernetes`, `k8s`, `aws`, `gcp`, `azure`, `cloud`),
		questions: []Question{
			{ID: "infra_provider", Type: SingleChoice, Question: "Which provider?", Options: []string{"AWS", "Google Cloud", "Azure", "On-premises", Other}, Category: "Infrastructure", Key: "Provider"},
			{ID: "infra_tooling", Type: SingleChoice, Question: "How is it provisioned?", Options: []string{"Terraform", "Pulumi", "CloudFormation", "By hand", Other}, Category: "Infrastructure", Key: "Provisioning"},
			other("infra_provider", "Infrastructure", "Provider", "infrastructure provider"),
		}},
	{name: "Messaging", triggers: words(`queue`, `queues`, `queuing`, `messaging`, `message broker`, `kafka`, `rabbitmq`, `sqs`, `pub/?sub`, `nats`, `event bus`, `background jobs?`),
		questions: []Question{
			{ID: "queue_system", Type: SingleChoice, Question: "Which queue or broker?", Options: []string{"RabbitMQ", "Kafka", "Amazon SQS", "Redis Streams", Other}, Category: "Messaging", Key: "System"},
			{ID: "queue_delivery", Type: SingleChoice, Question: "Which delivery guarantee do consumers rely on?", Options: []string{"At most once", "At least once", "Exactly once"}, Category: "Messaging", Key: "Delivery"},
			other("queue_system", "Messaging", "System", "queue or broker"),
		}},
}

// generalQuestions are asked for an ADR that no category describes (an
// explicit request for an ADR or an architecture decision).
var generalQuestions = []Question{
	{ID: "decision", Type: FreeText, Question: "What is being decided, in one sentence?", Category: "Decisions", Key: "Decision"},
	{ID: "alternatives", Type: FreeText, Question: "Which alternatives were considered, and why were they not chosen?", Optional: true, Category: "Decisions", Key: "Alternatives considered"},
}

var (
	// Explicit user intent: the request asks for an architecture decision.
	explicitIntent = words(`architecture`, `architectural`, `strategy`, `approach`, `adr`, `decision record`)
	// Scope-based triggers: a new dependency, a migration, a cross-cutting change.
	scopeTriggers = words(`new dependency`, `add(ing)? (a |the )?(library|dependency|service|sdk)`, `integrat(e|ion) with`, `migrat(e|ion|ing)`,
		`switch(ing)? (from|to)`, `replac(e|ing) .+ with`, `cross-cutting`, `across the (whole )?(code ?base|app|project)`, `every (service|module|file)`)
	// Explicit non-triggers: bug fixes, pure refactors, config-only changes.
	nonTriggers = words(`fix`, `fixes`, `fixing`, `bug`, `bugfix`, `hotfix`, `typo`, `refactor`, `refactoring`, `rename`, `cleanup`, `clean up`,
		`config`, `configuration`, `setting`, `settings`, `bump`, `tweak`)
	// Config-only: adding one more provider or option to an existing setup.
	configOnly = regexp.MustCompile(`(?i)\badd(ing)? (an? |another |one more )?(\w+ )?(provider|option|setting|flag|env(ironment)? var(iable)?)\b`)
)

// deterministicPlan is the default planner, used without an LLM and when
// one fails (a mock LLM made useful): the request's words decide, no network.
func deterministicPlan(intention, context string, forceADR bool, current map[string]map[string]string) Plan {
	text := intention + "\n" + context
	var p Plan
	for _, c := range catalog {
		if c.triggers.MatchString(text) {
			p.Categories = append(p.Categories, c.name)
		}
	}
	explicit := explicitIntent.MatchString(text)
	scope := scopeTriggers.MatchString(text)
	// A category already in the architecture being touched is an amendment.
	amends := false
	for _, c := range p.Categories {
		if _, ok := current[c]; ok {
			amends = true
		}
	}
	nonTrigger := nonTriggers.MatchString(intention) || configOnly.MatchString(intention)
	switch {
	case forceADR:
		p.NeedsADR, p.DecisionHint = true, "an ADR was requested (preferences.force_adr)"
	case explicit:
		p.NeedsADR, p.DecisionHint = true, "the request asks for an architecture decision"
	case nonTrigger:
		p.DecisionHint = "a fix, refactor or configuration change within existing patterns: a task, no ADR"
	case len(p.Categories) > 0 && amends:
		p.NeedsADR, p.DecisionHint = true, "it changes an existing architecture category ("+strings.Join(p.Categories, ", ")+")"
	case len(p.Categories) > 0:
		p.NeedsADR, p.DecisionHint = true, "it touches an architecture category ("+strings.Join(p.Categories, ", ")+")"
	case scope:
		p.NeedsADR, p.DecisionHint = true, "it adds a dependency, a migration or a cross-cutting change"
	default:
		p.DecisionHint = "no architecture impact found: a task, no ADR"
	}
	if !p.NeedsADR {
		p.Categories = nil
		return p
	}
	for _, c := range catalog {
		if slices.Contains(p.Categories, c.name) {
			p.Questions = append(p.Questions, c.questions...)
		}
	}
	if len(p.Questions) == 0 {
		p.Questions = slices.Clone(generalQuestions)
		p.Categories = []string{"Decisions"}
	}
	for _, q := range p.Questions {
		if q.DependsOn == "" && !q.Optional {
			p.MissingInfo = append(p.MissingInfo, q.ID)
		}
	}
	return p
}
