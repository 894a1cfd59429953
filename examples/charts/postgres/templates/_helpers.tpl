{{/* Name of every object of this release. */}}
{{- define "postgres.fullname" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Common labels. */}}
{{- define "postgres.labels" -}}
app.kubernetes.io/name: postgres
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.version | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* CPU and memory: explicit resources win over the preset. */}}
{{- define "postgres.resources" -}}
{{- $presets := dict
  "nano" (dict "cpu" "100m" "memory" "128Mi")
  "micro" (dict "cpu" "250m" "memory" "256Mi")
  "small" (dict "cpu" "500m" "memory" "512Mi")
  "medium" (dict "cpu" "1" "memory" "1Gi")
  "large" (dict "cpu" "2" "memory" "2Gi")
  "xlarge" (dict "cpu" "4" "memory" "4Gi") -}}
{{- $r := .Values.resources | default (get $presets .Values.resourcesPreset) -}}
requests:
  {{- toYaml $r | nindent 2 }}
limits:
  memory: {{ $r.memory | default "512Mi" }}
{{- end -}}

{{/* Role of each user, as JSON: {"app": "owner", ...}. */}}
{{- define "postgres.roles" -}}
{{- $roles := dict -}}
{{- range $name, $user := .Values.users -}}
{{- $_ := set $roles $name ($user.role | default "readwrite") -}}
{{- end -}}
{{- toJson $roles -}}
{{- end -}}
