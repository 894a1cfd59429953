
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-cozy' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-cozy'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-cozy' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Run the extension API server locally and register it with the cluster')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Install the server in the cluster: a Deployment, its Service, certificate and APIServices')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Diagnose APIService health and namespaces stuck in Terminating')
            [CompletionResult]::new('kinds', 'kinds', [CompletionResultType]::ParameterValue, 'List served kinds and scaffold kind definitions from Helm charts')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print shell completion scripts, or install kubectl''s plugin completer')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the client version and, when a cluster is reachable, the server version')
            [CompletionResult]::new('options', 'options', [CompletionResultType]::ParameterValue, 'Print the list of flags inherited by all commands')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-cozy;serve' {
            [CompletionResult]::new('--kinds', '--kinds', [CompletionResultType]::ParameterName, 'Kind definitions: a file, or a directory of YAML files (subdirectories too; reloaded on change)')
            [CompletionResult]::new('--charts', '--charts', [CompletionResultType]::ParameterName, 'Serve Helm charts as kinds, scaffolded in memory: a chart directory or packaged chart (.tgz), or a directory of charts and .tgz files (re-scaffolded on change)')
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Address to listen on (default: 127.0.0.1:6443 standalone and --route none, 127.0.0.1:<any> with the tunnel, 0.0.0.0:<any> for external-name, 0.0.0.0:8443 --in-cluster)')
            [CompletionResult]::new('--route', '--route', [CompletionResultType]::ParameterName, 'How kube-apiserver reaches this server (default: tunnel; none with --tls-cert-file)')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'The host the cluster reaches this machine by (external-name; default: detected for kind, minikube, k3d)')
            [CompletionResult]::new('--session-namespace', '--session-namespace', [CompletionResultType]::ParameterName, 'Namespace of the session''s objects (created if missing, and then removed at the end)')
            [CompletionResult]::new('--agent-image', '--agent-image', [CompletionResultType]::ParameterName, 'Image of the tunnel agent')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long to wait for the APIServices to become Available (0: no limit, until Ctrl-C)')
            [CompletionResult]::new('--lease-duration', '--lease-duration', [CompletionResultType]::ParameterName, 'Duration of the session Lease (renewed every third of it)')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'Embedded store file (standalone; default: <state dir>/standalone.sqlite)')
            [CompletionResult]::new('--write-kubeconfig', '--write-kubeconfig', [CompletionResultType]::ParameterName, 'Where to write the kubeconfig (standalone; merged into an existing one, whose other contexts stay; default: ~/.config/kubectl-cozy/standalone.kubeconfig, or under $XDG_CONFIG_HOME)')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for CAs, certificates and the standalone store (default: ~/.local/state/kubectl-cozy, or under $XDG_STATE_HOME)')
            [CompletionResult]::new('--tls-cert-file', '--tls-cert-file', [CompletionResultType]::ParameterName, 'Serving certificate (--route none), PEM')
            [CompletionResult]::new('--tls-key-file', '--tls-key-file', [CompletionResultType]::ParameterName, 'Serving key (--route none), PEM')
            [CompletionResult]::new('--rbac-subject', '--rbac-subject', [CompletionResultType]::ParameterName, 'The server''s identity in --print-rbac: NAMESPACE/NAME (a ServiceAccount) or user:NAME')
            [CompletionResult]::new('--drain-timeout', '--drain-timeout', [CompletionResultType]::ParameterName, 'Time to let requests finish on shutdown (0: stop at once)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: yaml or json or name')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: yaml or json or name')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--standalone', '--standalone', [CompletionResultType]::ParameterName, 'Serve without any cluster, over an embedded store, and write a kubeconfig for it')
            [CompletionResult]::new('--takeover', '--takeover', [CompletionResultType]::ParameterName, 'Take over group/versions another server or session serves; restored byte for byte on exit (deleted instead if their own serve session has ended)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No access log on stderr (cluster mode; standalone prints none)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No access log on stderr (cluster mode; standalone prints none)')
            [CompletionResult]::new('--exit-on-disconnect', '--exit-on-disconnect', [CompletionResultType]::ParameterName, 'Exit (after cleaning up) when the tunnel drops instead of reconnecting')
            [CompletionResult]::new('--no-session-guard', '--no-session-guard', [CompletionResultType]::ParameterName, 'Start no guard process: a serve killed or crashed is then reaped only by the tunnel agent once its Lease expires, or (external-name route) by the next serve or `doctor --fix`')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print every object the session would create (YAML; -o json a List, -o name names) and create nothing')
            [CompletionResult]::new('--impersonate', '--impersonate', [CompletionResultType]::ParameterName, 'Write HelmReleases as the requesting user (impersonation), so users need HelmRelease rights too')
            [CompletionResult]::new('--print-rbac', '--print-rbac', [CompletionResultType]::ParameterName, 'Print the RBAC objects the server and its users need (YAML, or -o json|name) and exit')
            [CompletionResult]::new('--in-cluster', '--in-cluster', [CompletionResultType]::ParameterName, 'Run as the in-cluster server `kubectl cozy install` deploys: in-cluster config, --tls-cert-file/--tls-key-file, no registration')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;install' {
            [CompletionResult]::new('--kinds', '--kinds', [CompletionResultType]::ParameterName, 'Kind definitions: a file, or a directory of YAML files (subdirectories too; shipped as a ConfigMap)')
            [CompletionResult]::new('--replicas', '--replicas', [CompletionResultType]::ParameterName, 'Number of server replicas (each keeps one HelmRelease watch)')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'The server''s image')
            [CompletionResult]::new('--service-monitor', '--service-monitor', [CompletionResultType]::ParameterName, 'Add a Prometheus Operator ServiceMonitor for /metrics, with these labels (key=value,…) besides the install''s')
            [CompletionResult]::new('--prometheus-rules', '--prometheus-rules', [CompletionResultType]::ParameterName, 'With --service-monitor, add a PrometheusRule alerting on the server, with these labels besides the install''s')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'client: print without contacting the cluster; server: the server checks, nothing is stored')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'With --apply, how long to wait for the Deployment before registering APIServices that are new (0: no limit)')
            [CompletionResult]::new('--field-manager', '--field-manager', [CompletionResultType]::ParameterName, 'Field manager of the server-side apply')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: yaml or json or name')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: yaml or json or name')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--cert-manager', '--cert-manager', [CompletionResultType]::ParameterName, 'Take the serving certificate from cert-manager (Issuers and Certificates; caBundle injected)')
            [CompletionResult]::new('--impersonate', '--impersonate', [CompletionResultType]::ParameterName, 'Write HelmReleases as the requesting user (impersonation rights are granted)')
            [CompletionResult]::new('--apply', '--apply', [CompletionResultType]::ParameterName, 'Server-side apply the objects (after showing the diff and asking)')
            [CompletionResult]::new('--delete', '--delete', [CompletionResultType]::ParameterName, 'Remove the install (after showing what and asking): its APIServices first, the namespace last')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Apply or delete without asking')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Apply or delete without asking')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;doctor' {
            [CompletionResult]::new('--probe-timeout', '--probe-timeout', [CompletionResultType]::ParameterName, 'Time limit for each APIService probe (the aggregator''s own availability check allows 5s; 0: the request timeout''s)')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long --fix waits for unblocked namespaces to finish deleting (0: no wait)')
            [CompletionResult]::new('--stuck-after', '--stuck-after', [CompletionResultType]::ParameterName, 'Deletion older than this counts as stuck rather than in progress (0: every deletion)')
            [CompletionResult]::new('--ca-warn-days', '--ca-warn-days', [CompletionResultType]::ParameterName, 'Warn about caBundle certificates that expire within this many days')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'API requests in flight at most')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Check every namespace: also objects stuck in deletion outside Terminating namespaces (-n is then ignored)')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Check every namespace: also objects stuck in deletion outside Terminating namespaces (-n is then ignored)')
            [CompletionResult]::new('--fix', '--fix', [CompletionResultType]::ParameterName, 'Build a fix plan and show it; apply it after a confirmation at the terminal, or with --yes')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Apply the fix plan without asking')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Apply the fix plan without asking')
            [CompletionResult]::new('--finalize-namespaces', '--finalize-namespaces', [CompletionResultType]::ParameterName, 'Also plan, as a last resort, clearing spec.finalizers through /finalize for namespaces still stuck after the other actions (objects left in them stay in etcd)')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;kinds' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List kinds from local definitions or from the live cluster')
            [CompletionResult]::new('scaffold', 'scaffold', [CompletionResultType]::ParameterValue, 'Turn a Helm chart into a kind definition')
            break
        }
        'kubectl-cozy;kinds;list' {
            [CompletionResult]::new('--kinds', '--kinds', [CompletionResultType]::ParameterName, 'Kind definitions: a file, or a directory of YAML files (subdirectories too; default: ask the cluster)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'API group to discover in the cluster')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;kinds;scaffold' {
            [CompletionResult]::new('--repo-index', '--repo-index', [CompletionResultType]::ParameterName, 'A Helm repository index.yaml to take the chart from (with --chart)')
            [CompletionResult]::new('--chart', '--chart', [CompletionResultType]::ParameterName, 'The chart in the repository index: NAME or NAME@VERSION')
            [CompletionResult]::new('--kind', '--kind', [CompletionResultType]::ParameterName, 'Kind name (default: Chart.yaml''s kubectl-cozy.io/kind annotation, else the chart name in UpperCamelCase, capitalized as Chart.yaml''s description writes it or as known acronyms are)')
            [CompletionResult]::new('--singular', '--singular', [CompletionResultType]::ParameterName, 'Singular resource name (default: the kind, lower-case)')
            [CompletionResult]::new('--plural', '--plural', [CompletionResultType]::ParameterName, 'Plural resource name (default: Kubernetes'' rule; set it for irregular plurals)')
            [CompletionResult]::new('--short-name', '--short-name', [CompletionResultType]::ParameterName, 'A short name for kubectl (repeatable)')
            [CompletionResult]::new('--category', '--category', [CompletionResultType]::ParameterName, 'A category (repeatable); `all` adds the kind to `kubectl get all`')
            [CompletionResult]::new('--group-version', '--group-version', [CompletionResultType]::ParameterName, 'API group and version to serve the kind in (default: the kubectl-cozy.io/group-version annotation, else apps.cozystack.io/v1alpha1)')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'HelmRelease name prefix (default: <singular>-)')
            [CompletionResult]::new('--source-ref', '--source-ref', [CompletionResultType]::ParameterName, 'Flux source of the chart as KIND/NAME or KIND/NAMESPACE/NAME (KIND: HelmRepository, GitRepository or Bucket; without NAMESPACE, the app''s; default: the kubectl-cozy.io/source-ref annotation, else HelmRepository/cozy-public/cozystack-apps)')
            [CompletionResult]::new('--chart-ref', '--chart-ref', [CompletionResultType]::ParameterName, 'Use a Flux chartRef (KIND/NAME or KIND/NAMESPACE/NAME; KIND: OCIRepository, HelmChart or ExternalArtifact) instead of chart + sourceRef')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Definition format: ours, or a Cozystack ApplicationDefinition')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write <singular>.yaml (or .json) into this directory instead of stdout')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: yaml or json')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: yaml or json')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'With --out: overwrite a file there that differs from the scaffolded definition (hand edits are lost)')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;completion' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('bash', 'bash', [CompletionResultType]::ParameterValue, 'Print the bash completion script')
            [CompletionResult]::new('zsh', 'zsh', [CompletionResultType]::ParameterValue, 'Print the zsh completion script')
            [CompletionResult]::new('fish', 'fish', [CompletionResultType]::ParameterValue, 'Print the fish completion script')
            [CompletionResult]::new('powershell', 'powershell', [CompletionResultType]::ParameterValue, 'Print the PowerShell completion script')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Install kubectl_complete-cozy next to the plugin binary, for `kubectl cozy <TAB>`')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove the kubectl_complete-cozy link that `completion install` made')
            break
        }
        'kubectl-cozy;completion;bash' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;completion;zsh' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;completion;fish' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;completion;powershell' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;completion;install' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Directory to install into (default: where kubectl finds the kubectl-cozy plugin on PATH, e.g. krew''s bin)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace an existing kubectl_complete-cozy that is not ours')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;completion;uninstall' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Directory to remove it from (default: where completion install puts it)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;version' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--client', '--client', [CompletionResultType]::ParameterName, 'Print only the client version; do not contact the cluster')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;options' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;tunnel-agent' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'The serve session this agent belongs to; connections of any other session are refused')
            [CompletionResult]::new('--data-listen', '--data-listen', [CompletionResultType]::ParameterName, 'Where the aggregator connects (the Service''s target port)')
            [CompletionResult]::new('--control-listen', '--control-listen', [CompletionResultType]::ParameterName, 'Where serve connects through pods/portforward (keep it on localhost)')
            [CompletionResult]::new('--health-listen', '--health-listen', [CompletionResultType]::ParameterName, 'Where probes connect: GET /livez, GET /readyz (ready while serve is connected)')
            [CompletionResult]::new('--hold', '--hold', [CompletionResultType]::ParameterName, 'How long an aggregator connection waits for serve before it is reset')
            [CompletionResult]::new('--session-namespace', '--session-namespace', [CompletionResultType]::ParameterName, 'The session namespace: watch the session''s Lease there and reap the session once it expires')
            [CompletionResult]::new('--lease-grace', '--lease-grace', [CompletionResultType]::ParameterName, 'Added to the Lease''s duration before the session counts as dead')
            [CompletionResult]::new('--lease-poll', '--lease-poll', [CompletionResultType]::ParameterName, 'Time between reads of the session Lease')
            [CompletionResult]::new('--keepalive-interval', '--keepalive-interval', [CompletionResultType]::ParameterName, 'Time between keepalive pings to serve')
            [CompletionResult]::new('--keepalive-timeout', '--keepalive-timeout', [CompletionResultType]::ParameterName, 'How long a keepalive ping may go unanswered before serve''s connection is dropped')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;session-guard' {
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'The serve session to guard')
            [CompletionResult]::new('--session-namespace', '--session-namespace', [CompletionResultType]::ParameterName, 'The session namespace, where its Lease is')
            [CompletionResult]::new('--lease-grace', '--lease-grace', [CompletionResultType]::ParameterName, 'Added to the Lease''s duration before the session counts as dead')
            [CompletionResult]::new('--give-up-after', '--give-up-after', [CompletionResultType]::ParameterName, 'How long the Lease may be unreadable (with serve gone) before the guard exits')
            [CompletionResult]::new('--serve-pid', '--serve-pid', [CompletionResultType]::ParameterName, 'The serve process: while it runs, an unreadable Lease is waited out; once it is gone with its Lease still there, the session is reaped')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE')
            [CompletionResult]::new('--allow-missing-template-keys', '--allow-missing-template-keys', [CompletionResultType]::ParameterName, 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error')
            [CompletionResult]::new('--template', '--template', [CompletionResultType]::ParameterName, 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-cozy;help' {
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Run the extension API server locally and register it with the cluster')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Install the server in the cluster: a Deployment, its Service, certificate and APIServices')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Diagnose APIService health and namespaces stuck in Terminating')
            [CompletionResult]::new('kinds', 'kinds', [CompletionResultType]::ParameterValue, 'List served kinds and scaffold kind definitions from Helm charts')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print shell completion scripts, or install kubectl''s plugin completer')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the client version and, when a cluster is reachable, the server version')
            [CompletionResult]::new('options', 'options', [CompletionResultType]::ParameterValue, 'Print the list of flags inherited by all commands')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-cozy;help;serve' {
            break
        }
        'kubectl-cozy;help;install' {
            break
        }
        'kubectl-cozy;help;doctor' {
            break
        }
        'kubectl-cozy;help;kinds' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List kinds from local definitions or from the live cluster')
            [CompletionResult]::new('scaffold', 'scaffold', [CompletionResultType]::ParameterValue, 'Turn a Helm chart into a kind definition')
            break
        }
        'kubectl-cozy;help;kinds;list' {
            break
        }
        'kubectl-cozy;help;kinds;scaffold' {
            break
        }
        'kubectl-cozy;help;completion' {
            [CompletionResult]::new('bash', 'bash', [CompletionResultType]::ParameterValue, 'Print the bash completion script')
            [CompletionResult]::new('zsh', 'zsh', [CompletionResultType]::ParameterValue, 'Print the zsh completion script')
            [CompletionResult]::new('fish', 'fish', [CompletionResultType]::ParameterValue, 'Print the fish completion script')
            [CompletionResult]::new('powershell', 'powershell', [CompletionResultType]::ParameterValue, 'Print the PowerShell completion script')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Install kubectl_complete-cozy next to the plugin binary, for `kubectl cozy <TAB>`')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove the kubectl_complete-cozy link that `completion install` made')
            break
        }
        'kubectl-cozy;help;completion;bash' {
            break
        }
        'kubectl-cozy;help;completion;zsh' {
            break
        }
        'kubectl-cozy;help;completion;fish' {
            break
        }
        'kubectl-cozy;help;completion;powershell' {
            break
        }
        'kubectl-cozy;help;completion;install' {
            break
        }
        'kubectl-cozy;help;completion;uninstall' {
            break
        }
        'kubectl-cozy;help;version' {
            break
        }
        'kubectl-cozy;help;options' {
            break
        }
        'kubectl-cozy;help;tunnel-agent' {
            break
        }
        'kubectl-cozy;help;session-guard' {
            break
        }
        'kubectl-cozy;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
