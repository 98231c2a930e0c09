{{/* The prefix of every object's name: the release's name. */}}
{{- define "showcase.name" -}}
{{- printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The labels of every object of one program. */}}
{{- define "showcase.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/part-of: defect-showcase
app.kubernetes.io/version: {{ .root.Values.image.tag | default .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* What selects one program's Pods. */}}
{{- define "showcase.selector" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{/* A program's image: by digest where one is given, else by tag. */}}
{{- define "showcase.image" -}}
{{- $v := .root.Values.image -}}
{{- $digest := get $v.digests .name -}}
{{- if $digest -}}
{{ $v.repository }}/{{ .name }}@{{ $digest }}
{{- else -}}
{{ $v.repository }}/{{ .name }}:{{ $v.tag | default .root.Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* One program's Deployment (gateway or a service). */}}
{{- define "showcase.deployment" -}}
{{- $root := .root -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "showcase.name" . }}
  labels:
    {{- include "showcase.labels" . | nindent 4 }}
spec:
  replicas: {{ .replicas }}
  selector:
    matchLabels:
      {{- include "showcase.selector" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "showcase.labels" . | nindent 8 }}
      annotations:
        checksum/defects: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- if $root.Values.prometheusAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ .admin | quote }}
        prometheus.io/path: /metrics
        {{- end }}
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 30
      {{- if eq .name "gateway" }}
      # The replicas spread over the nodes, one more on a node than on
      # another at most; a node tainted away (NotReady, cordoned) is not
      # counted, so the Pods it loses are placed on the others.
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: DoNotSchedule
          nodeTaintsPolicy: Honor
          matchLabelKeys: [pod-template-hash]
          labelSelector:
            matchLabels:
              {{- include "showcase.selector" . | nindent 14 }}
      {{- end }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: {{ .name }}
          image: {{ include "showcase.image" . }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          envFrom:
            - configMapRef:
                name: {{ include "showcase.name" (dict "root" $root "name" "defects") }}
          {{- with .env }}
          env:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          ports:
            - name: api
              containerPort: {{ .port }}
              protocol: TCP
            - name: admin
              containerPort: {{ .admin }}
              protocol: TCP
          livenessProbe:
            httpGet:
              path: /healthz
              port: admin
            periodSeconds: 10
            failureThreshold: 3
          {{- if eq .name "gateway" }}
          # A new gateway Pod takes traffic only once it has reached every
          # service (/readyz asks each); after its start /healthz, so that
          # one service rolling does not take every gateway off the Service.
          startupProbe:
            httpGet:
              path: /readyz
              port: admin
            periodSeconds: 2
            failureThreshold: 60
          readinessProbe:
            httpGet:
              path: /healthz
              port: admin
            periodSeconds: 5
            failureThreshold: 2
          {{- else }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: admin
            periodSeconds: 5
            failureThreshold: 2
          {{- end }}
          resources:
            {{- toYaml .resources | nindent 12 }}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: [ALL]
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 16Mi
{{- end -}}
