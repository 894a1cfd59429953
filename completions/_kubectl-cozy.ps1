
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
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Run the extension API server locally and register it with the cluster')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Diagnose APIService health and namespaces stuck in Terminating')
            [CompletionResult]::new('kinds', 'kinds', [CompletionResultType]::ParameterValue, 'List served kinds and scaffold kind definitions from Helm charts')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print shell completion scripts, or install kubectl''s plugin completer')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the client version and, when a cluster is reachable, the server version')
            break
        }
        'kubectl-cozy;serve' {
            [CompletionResult]::new('--kinds', '--kinds', [CompletionResultType]::ParameterName, 'Kind definitions: a file or a directory of YAML files (reloaded on change)')
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Address to listen on')
            [CompletionResult]::new('--data', '--data', [CompletionResultType]::ParameterName, 'Embedded store file (standalone; default: <state dir>/standalone.sqlite)')
            [CompletionResult]::new('--write-kubeconfig', '--write-kubeconfig', [CompletionResultType]::ParameterName, 'Where to write the kubeconfig (standalone; default: ~/.config/kubectl-cozy/standalone.kubeconfig)')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for the standalone CA (default: ~/.local/state/kubectl-cozy)')
            [CompletionResult]::new('--tls-cert-file', '--tls-cert-file', [CompletionResultType]::ParameterName, 'Serving certificate (cluster mode), PEM')
            [CompletionResult]::new('--tls-key-file', '--tls-key-file', [CompletionResultType]::ParameterName, 'Serving key (cluster mode), PEM')
            [CompletionResult]::new('--drain-timeout', '--drain-timeout', [CompletionResultType]::ParameterName, 'Time to let requests finish on shutdown')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--standalone', '--standalone', [CompletionResultType]::ParameterName, 'Serve without any cluster, over an embedded store, and write a kubeconfig for it')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-cozy;doctor' {
            [CompletionResult]::new('--probe-timeout', '--probe-timeout', [CompletionResultType]::ParameterName, 'Time limit for each APIService probe')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'How long --fix waits for unblocked namespaces to finish deleting')
            [CompletionResult]::new('--stuck-after', '--stuck-after', [CompletionResultType]::ParameterName, 'Deletion older than this counts as stuck rather than in progress')
            [CompletionResult]::new('--ca-warn-days', '--ca-warn-days', [CompletionResultType]::ParameterName, 'Warn about caBundle certificates that expire within this many days')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'API requests in flight at most')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Check every namespace: also objects stuck in deletion outside Terminating namespaces')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Check every namespace: also objects stuck in deletion outside Terminating namespaces')
            [CompletionResult]::new('--fix', '--fix', [CompletionResultType]::ParameterName, 'Build a fix plan and show it; apply it after a confirmation at the terminal, or with --yes')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Apply the fix plan without asking')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Apply the fix plan without asking')
            [CompletionResult]::new('--finalize-namespaces', '--finalize-namespaces', [CompletionResultType]::ParameterName, 'Also plan, as a last resort, clearing spec.finalizers through /finalize for namespaces still stuck after the other actions (objects left in them stay in etcd)')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
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
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List kinds from local definitions or from the live cluster')
            [CompletionResult]::new('scaffold', 'scaffold', [CompletionResultType]::ParameterValue, 'Turn a Helm chart into a kind definition')
            break
        }
        'kubectl-cozy;kinds;list' {
            [CompletionResult]::new('--kinds', '--kinds', [CompletionResultType]::ParameterName, 'Kind definitions: a file or a directory of YAML files (default: ask the cluster)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'API group to discover in the cluster')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-cozy;kinds;scaffold' {
            [CompletionResult]::new('--repo-index', '--repo-index', [CompletionResultType]::ParameterName, 'A Helm repository index.yaml to take the chart from (with --chart)')
            [CompletionResult]::new('--chart', '--chart', [CompletionResultType]::ParameterName, 'The chart in the repository index: NAME or NAME@VERSION')
            [CompletionResult]::new('--kind', '--kind', [CompletionResultType]::ParameterName, 'Kind name (default: from Chart.yaml''s name, UpperCamelCase)')
            [CompletionResult]::new('--singular', '--singular', [CompletionResultType]::ParameterName, 'Singular resource name (default: the kind, lower-case)')
            [CompletionResult]::new('--plural', '--plural', [CompletionResultType]::ParameterName, 'Plural resource name (default: Kubernetes'' rule; set it for irregular plurals)')
            [CompletionResult]::new('--short-name', '--short-name', [CompletionResultType]::ParameterName, 'A short name for kubectl (repeatable)')
            [CompletionResult]::new('--category', '--category', [CompletionResultType]::ParameterName, 'A category (repeatable); `all` adds the kind to `kubectl get all`')
            [CompletionResult]::new('--group-version', '--group-version', [CompletionResultType]::ParameterName, 'API group and version to serve the kind in')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'HelmRelease name prefix (default: <singular>-)')
            [CompletionResult]::new('--source-ref', '--source-ref', [CompletionResultType]::ParameterName, 'Flux source of the chart as KIND/NAME or KIND/NAMESPACE/NAME')
            [CompletionResult]::new('--chart-ref', '--chart-ref', [CompletionResultType]::ParameterName, 'Use a Flux chartRef (KIND/NAME or KIND/NAMESPACE/NAME) instead of chart + sourceRef')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Definition format: ours, or a Cozystack ApplicationDefinition')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Write <singular>.yaml (or .json) into this directory instead of stdout')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
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
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('bash', 'bash', [CompletionResultType]::ParameterValue, 'Print the bash completion script')
            [CompletionResult]::new('zsh', 'zsh', [CompletionResultType]::ParameterValue, 'Print the zsh completion script')
            [CompletionResult]::new('fish', 'fish', [CompletionResultType]::ParameterValue, 'Print the fish completion script')
            [CompletionResult]::new('powershell', 'powershell', [CompletionResultType]::ParameterValue, 'Print the PowerShell completion script')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Install kubectl_complete-cozy next to the plugin binary, for `kubectl cozy <TAB>`')
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
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
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
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
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
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
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
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-cozy;completion;install' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Directory to install into (default: the directory holding this binary); must be on PATH')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace an existing kubectl_complete-cozy that is not ours')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
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
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity on stderr, kubectl''s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace')
            [CompletionResult]::new('--client', '--client', [CompletionResultType]::ParameterName, 'Print only the client version; do not contact the cluster')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Disable colors (also when NO_COLOR is set or output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
