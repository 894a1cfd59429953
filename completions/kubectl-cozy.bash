# Flags once a dash is typed, as kubectl's completion offers them
__kubectl_cozy_candidates() {
    local word
    for word in $2; do
        [[ "$1" == -* || "${word}" != -* ]] && printf '%s\n' "${word}"
    done
}

_kubectl__cozy() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    # --flag=value: bash splits the word at =; the flag is two words back
    if [[ "${prev}" == "=" && ${COMP_CWORD} -ge 2 ]]; then
        prev="${COMP_WORDS[COMP_CWORD-2]}"
    fi
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="kubectl__cozy"
                ;;
            kubectl__cozy,completion)
                cmd="kubectl__cozy__subcmd__completion"
                ;;
            kubectl__cozy,doctor)
                cmd="kubectl__cozy__subcmd__doctor"
                ;;
            kubectl__cozy,help)
                cmd="kubectl__cozy__subcmd__help"
                ;;
            kubectl__cozy,install)
                cmd="kubectl__cozy__subcmd__install"
                ;;
            kubectl__cozy,kinds)
                cmd="kubectl__cozy__subcmd__kinds"
                ;;
            kubectl__cozy,options)
                cmd="kubectl__cozy__subcmd__options"
                ;;
            kubectl__cozy,serve)
                cmd="kubectl__cozy__subcmd__serve"
                ;;
            kubectl__cozy,session-guard)
                cmd="kubectl__cozy__subcmd__session__subcmd__guard"
                ;;
            kubectl__cozy,tunnel-agent)
                cmd="kubectl__cozy__subcmd__tunnel__subcmd__agent"
                ;;
            kubectl__cozy,version)
                cmd="kubectl__cozy__subcmd__version"
                ;;
            kubectl__cozy__subcmd__completion,bash)
                cmd="kubectl__cozy__subcmd__completion__subcmd__bash"
                ;;
            kubectl__cozy__subcmd__completion,fish)
                cmd="kubectl__cozy__subcmd__completion__subcmd__fish"
                ;;
            kubectl__cozy__subcmd__completion,install)
                cmd="kubectl__cozy__subcmd__completion__subcmd__install"
                ;;
            kubectl__cozy__subcmd__completion,powershell)
                cmd="kubectl__cozy__subcmd__completion__subcmd__powershell"
                ;;
            kubectl__cozy__subcmd__completion,uninstall)
                cmd="kubectl__cozy__subcmd__completion__subcmd__uninstall"
                ;;
            kubectl__cozy__subcmd__completion,zsh)
                cmd="kubectl__cozy__subcmd__completion__subcmd__zsh"
                ;;
            kubectl__cozy__subcmd__help,completion)
                cmd="kubectl__cozy__subcmd__help__subcmd__completion"
                ;;
            kubectl__cozy__subcmd__help,doctor)
                cmd="kubectl__cozy__subcmd__help__subcmd__doctor"
                ;;
            kubectl__cozy__subcmd__help,help)
                cmd="kubectl__cozy__subcmd__help__subcmd__help"
                ;;
            kubectl__cozy__subcmd__help,install)
                cmd="kubectl__cozy__subcmd__help__subcmd__install"
                ;;
            kubectl__cozy__subcmd__help,kinds)
                cmd="kubectl__cozy__subcmd__help__subcmd__kinds"
                ;;
            kubectl__cozy__subcmd__help,options)
                cmd="kubectl__cozy__subcmd__help__subcmd__options"
                ;;
            kubectl__cozy__subcmd__help,serve)
                cmd="kubectl__cozy__subcmd__help__subcmd__serve"
                ;;
            kubectl__cozy__subcmd__help,session-guard)
                cmd="kubectl__cozy__subcmd__help__subcmd__session__subcmd__guard"
                ;;
            kubectl__cozy__subcmd__help,tunnel-agent)
                cmd="kubectl__cozy__subcmd__help__subcmd__tunnel__subcmd__agent"
                ;;
            kubectl__cozy__subcmd__help,version)
                cmd="kubectl__cozy__subcmd__help__subcmd__version"
                ;;
            kubectl__cozy__subcmd__help__subcmd__completion,bash)
                cmd="kubectl__cozy__subcmd__help__subcmd__completion__subcmd__bash"
                ;;
            kubectl__cozy__subcmd__help__subcmd__completion,fish)
                cmd="kubectl__cozy__subcmd__help__subcmd__completion__subcmd__fish"
                ;;
            kubectl__cozy__subcmd__help__subcmd__completion,install)
                cmd="kubectl__cozy__subcmd__help__subcmd__completion__subcmd__install"
                ;;
            kubectl__cozy__subcmd__help__subcmd__completion,powershell)
                cmd="kubectl__cozy__subcmd__help__subcmd__completion__subcmd__powershell"
                ;;
            kubectl__cozy__subcmd__help__subcmd__completion,uninstall)
                cmd="kubectl__cozy__subcmd__help__subcmd__completion__subcmd__uninstall"
                ;;
            kubectl__cozy__subcmd__help__subcmd__completion,zsh)
                cmd="kubectl__cozy__subcmd__help__subcmd__completion__subcmd__zsh"
                ;;
            kubectl__cozy__subcmd__help__subcmd__kinds,list)
                cmd="kubectl__cozy__subcmd__help__subcmd__kinds__subcmd__list"
                ;;
            kubectl__cozy__subcmd__help__subcmd__kinds,scaffold)
                cmd="kubectl__cozy__subcmd__help__subcmd__kinds__subcmd__scaffold"
                ;;
            kubectl__cozy__subcmd__kinds,list)
                cmd="kubectl__cozy__subcmd__kinds__subcmd__list"
                ;;
            kubectl__cozy__subcmd__kinds,scaffold)
                cmd="kubectl__cozy__subcmd__kinds__subcmd__scaffold"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kubectl__cozy)
            opts="-n -o -v -h -V --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help --version serve install doctor kinds completion version options help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__completion)
            opts="-n -o -v -h --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help bash zsh fish powershell install uninstall"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__completion__subcmd__bash)
            opts="-n -o -v -h --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__completion__subcmd__fish)
            opts="-n -o -v -h --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__completion__subcmd__install)
            opts="-n -o -v -h --dir --force --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__completion__subcmd__powershell)
            opts="-n -o -v -h --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__completion__subcmd__uninstall)
            opts="-n -o -v -h --dir --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__completion__subcmd__zsh)
            opts="-n -o -v -h --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__doctor)
            opts="-A -y -n -o -v -h --all-namespaces --fix --yes --finalize-namespaces --probe-timeout --wait --stuck-after --ca-warn-days --concurrency --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --probe-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --wait)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --stuck-after)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --ca-warn-days)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --concurrency)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help)
            opts="serve install doctor kinds completion version options help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__completion)
            opts="bash zsh fish powershell install uninstall"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__completion__subcmd__bash)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__completion__subcmd__fish)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__completion__subcmd__install)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__completion__subcmd__powershell)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__completion__subcmd__uninstall)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__completion__subcmd__zsh)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__doctor)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__install)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__kinds)
            opts="list scaffold"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__kinds__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__kinds__subcmd__scaffold)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__options)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__serve)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__session__subcmd__guard)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__tunnel__subcmd__agent)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__help__subcmd__version)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__install)
            opts="-y -n -o -v -h --kinds --replicas --image --cert-manager --impersonate --service-monitor --prometheus-rules --apply --delete --dry-run --yes --timeout --field-manager --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kinds)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --replicas)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --image)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --service-monitor)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --prometheus-rules)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --dry-run)
                    COMPREPLY=($(compgen -W "client server" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --field-manager)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "yaml json name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "yaml json name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__kinds)
            opts="-n -o -v -h --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help list scaffold"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__kinds__subcmd__list)
            opts="-n -o -v -h --kinds --group --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kinds)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --group)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__kinds__subcmd__scaffold)
            opts="-n -o -v -h --repo-index --chart --kind --singular --plural --short-name --category --group-version --prefix --source-ref --chart-ref --format --out --force --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --repo-index)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --chart)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --kind)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --singular)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --plural)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --short-name)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --category)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --group-version)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --prefix)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --source-ref)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --chart-ref)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "kind cozystack" -- "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "yaml json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "yaml json" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            return 0
            ;;
        kubectl__cozy__subcmd__options)
            opts="-n -o -v -h --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__serve)
            opts="-q -n -o -v -h --standalone --kinds --charts --listen --route --host --session-namespace --agent-image --takeover --timeout --quiet --exit-on-disconnect --no-session-guard --dry-run --lease-duration --data --write-kubeconfig --state-dir --tls-cert-file --tls-key-file --impersonate --print-rbac --rbac-subject --in-cluster --drain-timeout --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kinds)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --charts)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --listen)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --route)
                    COMPREPLY=($(compgen -W "tunnel external-name none" -- "${cur}"))
                    return 0
                    ;;
                --host)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --session-namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --agent-image)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --lease-duration)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --agent-service-external-name)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --data)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --write-kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --tls-cert-file)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --tls-key-file)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --rbac-subject)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --drain-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "yaml json name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "yaml json name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__session__subcmd__guard)
            opts="-n -o -v -h --session --session-namespace --lease-grace --give-up-after --serve-pid --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --session-namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --lease-grace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --give-up-after)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --serve-pid)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__tunnel__subcmd__agent)
            opts="-n -o -v -h --session --data-listen --control-listen --health-listen --hold --session-namespace --lease-grace --lease-poll --keepalive-interval --keepalive-timeout --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --session)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --data-listen)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --control-listen)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --health-listen)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --hold)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --session-namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --lease-grace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --lease-poll)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --keepalive-interval)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --keepalive-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table wide json yaml name" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
        kubectl__cozy__subcmd__version)
            opts="-n -o -v -h --client --kubeconfig --context --cluster --user --namespace --request-timeout --output --allow-missing-template-keys --template --no-color --v --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
                [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
                return 0
            fi
            case "${prev}" in
                --kubeconfig)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --context)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --cluster)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -n)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json yaml" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json yaml" -- "${cur}"))
                    return 0
                    ;;
                --allow-missing-template-keys)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --template)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                --v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                -v)
                    COMPREPLY=("${cur}")
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o nospace
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "$(__kubectl_cozy_candidates "${cur}" "${opts}")" -- "${cur}") )
            [[ ${#COMPREPLY[@]} -eq 0 && "${cur}" != -* ]] && compopt +o default +o bashdefault 2>/dev/null
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _kubectl__cozy -o nosort -o bashdefault -o default kubectl-cozy
else
    complete -F _kubectl__cozy -o bashdefault -o default kubectl-cozy
fi
