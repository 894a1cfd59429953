# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_cozy_global_optspecs
    string join \n kubeconfig= context= cluster= user= n/namespace= request-timeout= o/output= allow-missing-template-keys= template= no-color v/v= h/help V/version
end

function __fish_kubectl_cozy_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_cozy_global_optspecs) -- $cmd 2>/dev/null
    # A global option's value is being typed: no subcommand yet
    or return 0
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_cozy_using_subcommand
    set -l cmd (__fish_kubectl_cozy_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -f -a "serve" -d 'Run the extension API server locally and register it with the cluster'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -f -a "install" -d 'Install the server in the cluster: a Deployment, its Service, certificate and APIServices'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -f -a "doctor" -d 'Diagnose APIService health and namespaces stuck in Terminating'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -f -a "kinds" -d 'List served kinds and scaffold kind definitions from Helm charts'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -f -a "completion" -d 'Print shell completion scripts, or install kubectl\'s plugin completer'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -f -a "version" -d 'Print the client version and, when a cluster is reachable, the server version'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -f -a "options" -d 'Print the list of flags inherited by all commands'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l kinds -d 'Kind definitions: a file, or a directory of YAML files (subdirectories too; reloaded on change)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l charts -d 'Serve Helm charts as kinds, scaffolded in memory: a chart directory or packaged chart (.tgz), or a directory of charts and .tgz files (re-scaffolded on change)' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l listen -d 'Address to listen on (default: 127.0.0.1:6443 standalone and --route none, 127.0.0.1:<any> with the tunnel, 0.0.0.0:<any> for external-name, 0.0.0.0:8443 --in-cluster)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l route -d 'How kube-apiserver reaches this server (default: tunnel; none with --tls-cert-file)' -r -f -a "tunnel\t'An agent pod and a reverse tunnel over pods/portforward (any cluster)'
external-name\t'An ExternalName Service to a host name the cluster resolves to this machine (kind, minikube, k3d)'
none\t'Register nothing: serve only (needs --tls-cert-file and --tls-key-file)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l host -d 'The host the cluster reaches this machine by (external-name; default: detected for kind, minikube, k3d)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l session-namespace -d 'Namespace of the session\'s objects (created if missing, and then removed at the end)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l agent-image -d 'Image of the tunnel agent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l timeout -d 'How long to wait for the APIServices to become Available (0: no limit, until Ctrl-C)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l lease-duration -d 'Duration of the session Lease (renewed every third of it)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l data -d 'Embedded store file (standalone; default: <state dir>/standalone.sqlite)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l write-kubeconfig -d 'Where to write the kubeconfig (standalone; merged into an existing one, whose other contexts stay; default: ~/.config/kubectl-cozy/standalone.kubeconfig, or under $XDG_CONFIG_HOME)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l state-dir -d 'Directory for CAs, certificates and the standalone store (default: ~/.local/state/kubectl-cozy, or under $XDG_STATE_HOME)' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l tls-cert-file -d 'Serving certificate (--route none), PEM' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l tls-key-file -d 'Serving key (--route none), PEM' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l rbac-subject -d 'The server\'s identity in --print-rbac: NAMESPACE/NAME (a ServiceAccount) or user:NAME' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l drain-timeout -d 'Time to let requests finish on shutdown (0: stop at once)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -s o -l output -d 'Output format: yaml or json or name' -r -f -a "yaml\t'YAML'
json\t'JSON'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l standalone -d 'Serve without any cluster, over an embedded store, and write a kubeconfig for it'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l takeover -d 'Take over group/versions another server or session serves; restored byte for byte on exit (deleted instead if their own serve session has ended)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -s q -l quiet -d 'No access log on stderr (cluster mode; standalone prints none)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l exit-on-disconnect -d 'Exit (after cleaning up) when the tunnel drops instead of reconnecting'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l no-session-guard -d 'Start no guard process: a serve killed or crashed is then reaped only by the tunnel agent once its Lease expires, or (external-name route) by the next serve or `doctor --fix`'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l dry-run -d 'Print every object the session would create (YAML; -o json a List, -o name names) and create nothing'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l impersonate -d 'Write HelmReleases as the requesting user (impersonation), so users need HelmRelease rights too'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l print-rbac -d 'Print the RBAC objects the server and its users need (YAML, or -o json|name) and exit'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l in-cluster -d 'Run as the in-cluster server `kubectl cozy install` deploys: in-cluster config, --tls-cert-file/--tls-key-file, no registration'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l kinds -d 'Kind definitions: a file, or a directory of YAML files (subdirectories too; shipped as a ConfigMap)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l replicas -d 'Number of server replicas (each keeps one HelmRelease watch)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l image -d 'The server\'s image' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l service-monitor -d 'Add a Prometheus Operator ServiceMonitor for /metrics, with these labels (key=value,…) besides the install\'s' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l prometheus-rules -d 'With --service-monitor, add a PrometheusRule alerting on the server, with these labels besides the install\'s' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l dry-run -d 'client: print without contacting the cluster; server: the server checks, nothing is stored' -r -f -a "client\t'Print the objects; contact no cluster (certificates are new)'
server\t'Send everything to the server as a dry run (with --apply: the diff, then a checked apply that stores nothing)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l timeout -d 'With --apply, how long to wait for the Deployment before registering APIServices that are new (0: no limit)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l field-manager -d 'Field manager of the server-side apply' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -s o -l output -d 'Output format: yaml or json or name' -r -f -a "yaml\t'YAML'
json\t'JSON'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l cert-manager -d 'Take the serving certificate from cert-manager (Issuers and Certificates; caBundle injected)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l impersonate -d 'Write HelmReleases as the requesting user (impersonation rights are granted)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l apply -d 'Server-side apply the objects (after showing the diff and asking)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l delete -d 'Remove the install (after showing what and asking): its APIServices first, the namespace last'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -s y -l yes -d 'Apply or delete without asking'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l probe-timeout -d 'Time limit for each APIService probe (the aggregator\'s own availability check allows 5s; 0: the request timeout\'s)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l wait -d 'How long --fix waits for unblocked namespaces to finish deleting (0: no wait)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l stuck-after -d 'Deletion older than this counts as stuck rather than in progress (0: every deletion)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l ca-warn-days -d 'Warn about caBundle certificates that expire within this many days' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l concurrency -d 'API requests in flight at most' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -s A -l all-namespaces -d 'Check every namespace: also objects stuck in deletion outside Terminating namespaces (-n is then ignored)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l fix -d 'Build a fix plan and show it; apply it after a confirmation at the terminal, or with --yes'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -s y -l yes -d 'Apply the fix plan without asking'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l finalize-namespaces -d 'Also plan, as a last resort, clearing spec.finalizers through /finalize for namespaces still stuck after the other actions (objects left in them stay in etcd)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -f -a "list" -d 'List kinds from local definitions or from the live cluster'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and not __fish_seen_subcommand_from list scaffold" -f -a "scaffold" -d 'Turn a Helm chart into a kind definition'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -l kinds -d 'Kind definitions: a file, or a directory of YAML files (subdirectories too; default: ask the cluster)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -l group -d 'API group to discover in the cluster' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l repo-index -d 'A Helm repository index.yaml to take the chart from (with --chart)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l chart -d 'The chart in the repository index: NAME or NAME@VERSION' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l kind -d 'Kind name (default: Chart.yaml\'s kubectl-cozy.io/kind annotation, else the chart name in UpperCamelCase, capitalized as Chart.yaml\'s description writes it or as known acronyms are)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l singular -d 'Singular resource name (default: the kind, lower-case)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l plural -d 'Plural resource name (default: Kubernetes\' rule; set it for irregular plurals)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l short-name -d 'A short name for kubectl (repeatable)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l category -d 'A category (repeatable); `all` adds the kind to `kubectl get all`' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l group-version -d 'API group and version to serve the kind in (default: the kubectl-cozy.io/group-version annotation, else apps.cozystack.io/v1alpha1)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l prefix -d 'HelmRelease name prefix (default: <singular>-)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l source-ref -d 'Flux source of the chart as KIND/NAME or KIND/NAMESPACE/NAME (KIND: HelmRepository, GitRepository or Bucket; without NAMESPACE, the app\'s; default: the kubectl-cozy.io/source-ref annotation, else HelmRepository/cozy-public/cozystack-apps)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l chart-ref -d 'Use a Flux chartRef (KIND/NAME or KIND/NAMESPACE/NAME; KIND: OCIRepository, HelmChart or ExternalArtifact) instead of chart + sourceRef' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l format -d 'Definition format: ours, or a Cozystack ApplicationDefinition' -r -f -a "kind\t'A kubectl-cozy kind definition'
cozystack\t'A Cozystack ApplicationDefinition (cozystack.io/v1alpha1)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l out -d 'Write <singular>.yaml (or .json) into this directory instead of stdout' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -s o -l output -d 'Output format: yaml or json' -r -f -a "yaml\t'YAML'
json\t'JSON'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l force -d 'With --out: overwrite a file there that differs from the scaffolded definition (hand edits are lost)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand kinds; and __fish_seen_subcommand_from scaffold" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -f -a "bash" -d 'Print the bash completion script'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -f -a "zsh" -d 'Print the zsh completion script'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -f -a "fish" -d 'Print the fish completion script'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -f -a "powershell" -d 'Print the PowerShell completion script'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -f -a "install" -d 'Install kubectl_complete-cozy next to the plugin binary, for `kubectl cozy <TAB>`'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and not __fish_seen_subcommand_from bash zsh fish powershell install uninstall" -f -a "uninstall" -d 'Remove the kubectl_complete-cozy link that `completion install` made'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from bash" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from zsh" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from fish" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from powershell" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -l dir -d 'Directory to install into (default: where kubectl finds the kubectl-cozy plugin on PATH, e.g. krew\'s bin)' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -l force -d 'Replace an existing kubectl_complete-cozy that is not ours'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -l dir -d 'Directory to remove it from (default: where completion install puts it)' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand completion; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
json\t'JSON'
yaml\t'YAML'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -l client -d 'Print only the client version; do not contact the cluster'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand version" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand options" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l session -d 'The serve session this agent belongs to; connections of any other session are refused' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l data-listen -d 'Where the aggregator connects (the Service\'s target port)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l control-listen -d 'Where serve connects through pods/portforward (keep it on localhost)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l health-listen -d 'Where probes connect: GET /livez, GET /readyz (ready while serve is connected)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l hold -d 'How long an aggregator connection waits for serve before it is reset' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l session-namespace -d 'The session namespace: watch the session\'s Lease there and reap the session once it expires' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l lease-grace -d 'Added to the Lease\'s duration before the session counts as dead' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l lease-poll -d 'Time between reads of the session Lease' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l keepalive-interval -d 'Time between keepalive pings to serve' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l keepalive-timeout -d 'How long a keepalive ping may go unanswered before serve\'s connection is dropped' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand tunnel-agent" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l session -d 'The serve session to guard' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l session-namespace -d 'The session namespace, where its Lease is' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l lease-grace -d 'Added to the Lease\'s duration before the session counts as dead' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l give-up-after -d 'How long the Lease may be unreadable (with serve gone) before the guard exits' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l serve-pid -d 'The serve process: while it runs, an unreadable Lease is waited out; once it is gone with its Lease still there, the session is reaped' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l kubeconfig -d 'Path to the kubeconfig file (default: the KUBECONFIG list, merged in order, else ~/.kube/config)' -r -F
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l context -d 'The kubeconfig context to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l cluster -d 'The kubeconfig cluster to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l user -d 'The kubeconfig user to use' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l request-timeout -d 'Time to wait for a single server request: 0 (no limit), or a number with a unit (1s, 2m, 3h)' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -s o -l output -d 'Output format: table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, jsonpath-as-json=TEMPLATE, go-template=TEMPLATE, go-template-file=FILE, custom-columns=SPEC or custom-columns-file=FILE' -r -f -a "table\t'A table, as `kubectl get` prints'
wide\t'A table with additional columns'
json\t'JSON'
yaml\t'YAML'
name\t'Only names, as kubectl prints them (an object\'s kind.group/name; a kind\'s plural.group, as api-resources)'"
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l allow-missing-template-keys -d 'Print nothing (jsonpath) or <no value> (go-template) for a field or map key the template names that is missing; =false makes it an error' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l template -d 'The template of -o jsonpath, jsonpath-as-json or go-template, or the path of the template file of -o jsonpath-file or go-template-file; alone, it means -o go-template' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -s v -l v -d 'Log verbosity on stderr, kubectl\'s scale: 0 warnings, 1-3 info, 4-5 debug, 6+ trace and each request sent' -r -f
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -l no-color -d 'Disable colors (also when NO_COLOR is set or output is not a terminal)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand session-guard" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and not __fish_seen_subcommand_from serve install doctor kinds completion version options tunnel-agent session-guard help" -f -a "serve" -d 'Run the extension API server locally and register it with the cluster'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and not __fish_seen_subcommand_from serve install doctor kinds completion version options tunnel-agent session-guard help" -f -a "install" -d 'Install the server in the cluster: a Deployment, its Service, certificate and APIServices'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and not __fish_seen_subcommand_from serve install doctor kinds completion version options tunnel-agent session-guard help" -f -a "doctor" -d 'Diagnose APIService health and namespaces stuck in Terminating'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and not __fish_seen_subcommand_from serve install doctor kinds completion version options tunnel-agent session-guard help" -f -a "kinds" -d 'List served kinds and scaffold kind definitions from Helm charts'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and not __fish_seen_subcommand_from serve install doctor kinds completion version options tunnel-agent session-guard help" -f -a "completion" -d 'Print shell completion scripts, or install kubectl\'s plugin completer'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and not __fish_seen_subcommand_from serve install doctor kinds completion version options tunnel-agent session-guard help" -f -a "version" -d 'Print the client version and, when a cluster is reachable, the server version'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and not __fish_seen_subcommand_from serve install doctor kinds completion version options tunnel-agent session-guard help" -f -a "options" -d 'Print the list of flags inherited by all commands'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and not __fish_seen_subcommand_from serve install doctor kinds completion version options tunnel-agent session-guard help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and __fish_seen_subcommand_from kinds" -f -a "list" -d 'List kinds from local definitions or from the live cluster'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and __fish_seen_subcommand_from kinds" -f -a "scaffold" -d 'Turn a Helm chart into a kind definition'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and __fish_seen_subcommand_from completion" -f -a "bash" -d 'Print the bash completion script'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and __fish_seen_subcommand_from completion" -f -a "zsh" -d 'Print the zsh completion script'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and __fish_seen_subcommand_from completion" -f -a "fish" -d 'Print the fish completion script'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and __fish_seen_subcommand_from completion" -f -a "powershell" -d 'Print the PowerShell completion script'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and __fish_seen_subcommand_from completion" -f -a "install" -d 'Install kubectl_complete-cozy next to the plugin binary, for `kubectl cozy <TAB>`'
complete -c kubectl-cozy -n "__fish_kubectl_cozy_using_subcommand help; and __fish_seen_subcommand_from completion" -f -a "uninstall" -d 'Remove the kubectl_complete-cozy link that `completion install` made'
