/**
 * Providers' credentials by their published shape: a fixed prefix, then a run of a known alphabet
 * and length. The shapes are those of gitleaks' default configuration (its rule ids are given as
 * each one's source) that an agent's tool calls carry — AI providers, source hosts, package
 * registries, clouds, chat webhooks, secret stores. One table for every redactor: the TypeScript
 * detectors compile it, and `npm run gen:secret-providers` writes it for the Python emitter
 * (emit-python/tool_audit_emit/_providers.py) and as docs/secret-providers.md; a test keeps both
 * current. Patterns are written for JavaScript and Python alike: ASCII classes, no look-behind,
 * case-sensitive. Pure data.
 */

/** One provider's credential shape. */
export interface ProviderRule {
  /** The placeholder's rule: `[redacted:<rule>:…]`. */
  rule: string;
  /** Whose credential, as docs/secret-providers.md lists it. */
  provider: string;
  /** Where the shape comes from: a gitleaks rule id, or the vendor's documentation. */
  source: string;
  /** Literals one of which a text must hold for the pattern to be tried (the pattern's prefix). */
  need: readonly string[];
  /** The shape; group `group` (default 0: the whole match) is the secret. */
  pattern: string;
  group?: number;
}

/** Every provider shape, in the order the detectors try them (more specific prefixes first). */
export const PROVIDER_RULES: readonly ProviderRule[] = [
  { rule: 'langfuse_key', provider: 'Langfuse', source: 'Langfuse docs (sk-lf- secret keys)', need: ['sk-lf-'], pattern: '\\bsk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\b' },
  { rule: 'openrouter_key', provider: 'OpenRouter', source: 'gitleaks openrouter-api-key', need: ['sk-or-v1-'], pattern: '\\bsk-or-v1-[0-9a-f]{64}\\b' },
  { rule: 'groq_key', provider: 'Groq', source: 'gitleaks groq-api-key', need: ['gsk_'], pattern: '\\bgsk_[A-Za-z0-9]{52}\\b' },
  { rule: 'xai_key', provider: 'xAI', source: 'gitleaks xai-api-key', need: ['xai-'], pattern: '\\bxai-[A-Za-z0-9]{80}\\b' },
  { rule: 'perplexity_key', provider: 'Perplexity', source: 'gitleaks perplexity-api-key', need: ['pplx-'], pattern: '\\bpplx-[A-Za-z0-9]{48}\\b' },
  { rule: 'replicate_token', provider: 'Replicate', source: 'Replicate docs (r8_ tokens)', need: ['r8_'], pattern: '\\br8_[A-Za-z0-9]{37}\\b' },
  { rule: 'nvidia_key', provider: 'NVIDIA NGC / build.nvidia.com', source: 'gitleaks nvidia-api-key', need: ['nvapi-'], pattern: '\\bnvapi-[A-Za-z0-9_-]{64}(?![A-Za-z0-9_-])' },
  { rule: 'langsmith_key', provider: 'LangSmith', source: 'gitleaks langsmith-api-key', need: ['lsv2_'], pattern: '\\blsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}\\b' },
  { rule: 'gitlab_token', provider: 'GitLab', source: 'gitleaks gitlab-pat, gitlab-rrt, gitlab-deploy-token, gitlab-ptt …', need: ['glpat-', 'glrt-', 'gldt-', 'glptt-', 'glft-', 'glcbt-', 'glsoat-', 'glagent-'], pattern: '\\bgl(?:pat|rt|dt|ptt|ft|cbt|soat|agent)-[0-9A-Za-z_.-]{20,}' },
  { rule: 'npm_token', provider: 'npm', source: 'gitleaks npm-access-token', need: ['npm_'], pattern: '\\bnpm_[A-Za-z0-9]{36}\\b' },
  { rule: 'pypi_token', provider: 'PyPI', source: 'gitleaks pypi-upload-token', need: ['pypi-AgEIcHlwaS5vcmc'], pattern: '\\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}' },
  { rule: 'docker_hub_token', provider: 'Docker Hub', source: 'Docker docs (dckr_pat_ access tokens)', need: ['dckr_pat_'], pattern: '\\bdckr_pat_[A-Za-z0-9_-]{27}(?![A-Za-z0-9_-])' },
  { rule: 'atlassian_token', provider: 'Atlassian (Jira, Confluence)', source: 'gitleaks atlassian-api-token', need: ['ATATT3'], pattern: '\\bATATT3[A-Za-z0-9_=-]{186}' },
  { rule: 'linear_key', provider: 'Linear', source: 'gitleaks linear-api-key', need: ['lin_api_'], pattern: '\\blin_api_[A-Za-z0-9]{40}\\b' },
  { rule: 'notion_token', provider: 'Notion', source: 'Notion docs (secret_ and ntn_ integration tokens)', need: ['secret_', 'ntn_'], pattern: '\\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})\\b' },
  { rule: 'shopify_token', provider: 'Shopify', source: 'gitleaks shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret', need: ['shpat_', 'shpca_', 'shppa_', 'shpss_'], pattern: '\\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\\b' },
  { rule: 'digitalocean_token', provider: 'DigitalOcean', source: 'gitleaks digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token', need: ['dop_v1_', 'doo_v1_', 'dor_v1_'], pattern: '\\bdo[opr]_v1_[a-f0-9]{64}\\b' },
  { rule: 'doppler_token', provider: 'Doppler', source: 'gitleaks doppler-api-token', need: ['dp.pt.'], pattern: '\\bdp\\.pt\\.[A-Za-z0-9]{43}\\b' },
  { rule: 'databricks_token', provider: 'Databricks', source: 'gitleaks databricks-api-token', need: ['dapi'], pattern: '\\bdapi[a-h0-9]{32}(?:-\\d)?\\b' },
  { rule: 'grafana_token', provider: 'Grafana', source: 'gitleaks grafana-cloud-api-token, grafana-service-account-token', need: ['glc_', 'glsa_'], pattern: '\\b(?:glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\\b)' },
  { rule: 'newrelic_key', provider: 'New Relic', source: 'gitleaks new-relic-user-api-key, new-relic-browser-api-token, new-relic-insert-key', need: ['NRAK-', 'NRJS-', 'NRII-'], pattern: '\\bNR(?:AK|JS|II)-[A-Za-z0-9_-]{27,32}(?![A-Za-z0-9_-])' },
  { rule: 'sentry_token', provider: 'Sentry', source: 'gitleaks sentry-org-token, sentry-user-token', need: ['sntrys_', 'sntryu_'], pattern: '\\b(?:sntrys_eyJ[A-Za-z0-9+/=_-]{60,}|sntryu_[a-f0-9]{64}\\b)' },
  { rule: 'postman_key', provider: 'Postman', source: 'gitleaks postman-api-token', need: ['PMAK-'], pattern: '\\bPMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}\\b' },
  { rule: 'pulumi_token', provider: 'Pulumi', source: 'gitleaks pulumi-api-token', need: ['pul-'], pattern: '\\bpul-[a-f0-9]{40}\\b' },
  { rule: 'terraform_token', provider: 'HashiCorp Terraform Cloud', source: 'gitleaks hashicorp-tf-api-token', need: ['.atlasv1.'], pattern: '\\b[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}\\b' },
  { rule: 'vault_token', provider: 'HashiCorp Vault', source: 'gitleaks vault-service-token, vault-batch-token', need: ['hvs.', 'hvb.'], pattern: '\\bhv[sb]\\.[A-Za-z0-9_-]{90,300}' },
  { rule: 'onepassword_token', provider: '1Password service accounts', source: 'gitleaks 1password-service-account-token', need: ['ops_eyJ'], pattern: '\\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}' },
  { rule: 'age_secret_key', provider: 'age encryption', source: 'gitleaks age-secret-key', need: ['AGE-SECRET-KEY-1'], pattern: '\\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\\b' },
  { rule: 'supabase_token', provider: 'Supabase', source: 'Supabase docs (sbp_ access tokens, sb_secret_ keys)', need: ['sbp_', 'sb_secret_'], pattern: '\\b(?:sbp_[a-f0-9]{40}\\b|sb_secret_[A-Za-z0-9_-]{31,}(?![A-Za-z0-9_-]))' },
  { rule: 'planetscale_token', provider: 'PlanetScale', source: 'gitleaks planetscale-api-token, planetscale-password, planetscale-oauth-token', need: ['pscale_'], pattern: '\\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,64}\\b' },
  { rule: 'render_key', provider: 'Render', source: 'Render docs (rnd_ API keys)', need: ['rnd_'], pattern: '\\brnd_[A-Za-z0-9]{32}\\b' },
  { rule: 'flyio_token', provider: 'Fly.io', source: 'gitleaks flyio-access-token', need: ['fo1_', 'fm2_'], pattern: '\\b(?:fo1_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])|fm2_[A-Za-z0-9+/]{100,}={0,3})' },
  { rule: 'heroku_key', provider: 'Heroku', source: 'gitleaks heroku-api-key-v2', need: ['HRKU-AA'], pattern: '\\bHRKU-AA[0-9A-Za-z_-]{58}(?![0-9A-Za-z_-])' },
  { rule: 'tailscale_key', provider: 'Tailscale', source: 'Tailscale docs (tskey- API, auth and OAuth client keys)', need: ['tskey-'], pattern: '\\btskey-(?:api|auth|client|webhook|scim)-[A-Za-z0-9]+-[A-Za-z0-9]{16,}\\b' },
  { rule: 'cloudflare_origin_ca_key', provider: 'Cloudflare', source: 'gitleaks cloudflare-origin-ca-key', need: ['v1.0-'], pattern: '\\bv1\\.0-[a-f0-9]{24}-[a-f0-9]{146}\\b' },
  { rule: 'azure_ad_client_secret', provider: 'Microsoft Entra ID (Azure AD)', source: 'gitleaks azure-ad-client-secret', need: ['Q~'], pattern: '(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}\\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])', group: 1 },
  { rule: 'google_oauth_token', provider: 'Google OAuth', source: 'gitleaks gcp-api-key family; Google docs (ya29. access tokens, GOCSPX- client secrets)', need: ['ya29.', 'GOCSPX-'], pattern: '\\b(?:ya29\\.[0-9A-Za-z_-]{20,}|GOCSPX-[A-Za-z0-9_-]{28})' },
  { rule: 'slack_webhook', provider: 'Slack (incoming webhooks)', source: 'gitleaks slack-webhook-url', need: ['hooks.slack.com/'], pattern: 'hooks\\.slack\\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/]{43,56})', group: 1 },
  { rule: 'discord_webhook', provider: 'Discord (webhooks)', source: 'Discord docs (webhook URLs carry their token)', need: ['/api/webhooks/'], pattern: 'discord(?:app)?\\.com/api/webhooks/[0-9]+/([A-Za-z0-9_-]{60,})', group: 1 },
  { rule: 'telegram_bot_token', provider: 'Telegram (bot tokens)', source: 'gitleaks telegram-bot-api-token', need: [':AA'], pattern: '(?:^|[^0-9A-Za-z_]|bot)([0-9]{8,10}:AA[0-9A-Za-z_-]{33})(?![0-9A-Za-z_-])', group: 1 },
  { rule: 'square_token', provider: 'Square', source: 'gitleaks square-access-token, square-secret', need: ['sq0atp-', 'sq0csp-', 'EAAA'], pattern: '\\b(?:sq0atp-[0-9A-Za-z_-]{22}|sq0csp-[0-9A-Za-z_-]{43}|EAAA[0-9A-Za-z_-]{60})(?![0-9A-Za-z_-])' },
  { rule: 'dropbox_token', provider: 'Dropbox', source: 'gitleaks dropbox-short-lived-api-token', need: ['sl.'], pattern: '\\bsl\\.[A-Za-z0-9_=-]{135,}' },
  { rule: 'mailchimp_key', provider: 'Mailchimp', source: 'gitleaks mailchimp-api-key', need: ['-us'], pattern: '\\b[a-f0-9]{32}-us[0-9]{1,2}\\b' },
  { rule: 'contentful_token', provider: 'Contentful', source: 'gitleaks contentful-delivery-api-token (CFPAT- personal tokens)', need: ['CFPAT-'], pattern: '\\bCFPAT-[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])' },
  { rule: 'readme_key', provider: 'ReadMe', source: 'gitleaks readme-api-token', need: ['rdme_'], pattern: '\\brdme_[a-z0-9]{70}\\b' },
  { rule: 'prefect_key', provider: 'Prefect', source: 'gitleaks prefect-api-token', need: ['pnu_'], pattern: '\\bpnu_[A-Za-z0-9]{36}\\b' },
];
