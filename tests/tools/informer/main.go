// Command informer runs client-go's real informer machinery against an API
// server and reports what it sees, for the integration tests of kubectl-cozy's
// extension API server (tests/it/informer.rs).
//
// It starts two shared informers for one resource of apps.cozystack.io/v1alpha1
// in one namespace: a dynamic informer (full objects) and a metadata-only
// informer (PartialObjectMetadata, as kube-controller-manager's garbage
// collector and namespace controller use). Both run with client-go's default
// feature gates, where WatchListClient is on: the initial state comes from a
// watch with sendInitialEvents=true instead of a list. The tool forces that
// gate on (KUBE_FEATURE_WatchListClient=true unless set) and records every
// request it makes, so it can say whether WatchList was really used.
//
// Output on stdout, one JSON object per line:
//
//	{"informer":"dynamic|metadata","type":"add|update|delete","name":...,"resourceVersion":...,"initial":bool}
//	{"informer":"dynamic|metadata","watchError":"..."}
//	{"informer":"dynamic|metadata","watchlistRequests":N,"watchlistOK":N,"watchRequests":N,"listRequests":N}
//	{"watchlist":true|false}
//	{"synced":true}
//
// The request summary and the watchlist line come right before the synced line.
// watchlist is true when each informer made a watch with sendInitialEvents=true
// that the server accepted and neither fell back to a plain list. Requests
// are logged on stderr. The tool exits when stdin reaches EOF or after
// --timeout; it exits 1 if the informers did not sync before that.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// out serialises JSON lines on stdout.
type out struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (o *out) line(v any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.enc.Encode(v)
}

// recorder counts the requests of one client, by kind.
type recorder struct {
	name string

	mu                sync.Mutex
	watchlistRequests int // watch=true&sendInitialEvents=true
	watchlistOK       int // ... answered 200
	watchRequests     int // any watch=true
	listRequests      int // GET of a collection without watch: a list (a WatchList fallback)
}

type summary struct {
	Informer          string `json:"informer"`
	WatchlistRequests int    `json:"watchlistRequests"`
	WatchlistOK       int    `json:"watchlistOK"`
	WatchRequests     int    `json:"watchRequests"`
	ListRequests      int    `json:"listRequests"`
}

func (r *recorder) summary() summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return summary{r.name, r.watchlistRequests, r.watchlistOK, r.watchRequests, r.listRequests}
}

func (r *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		watch := q.Get("watch") == "true" || q.Get("watch") == "1"
		watchlist := watch && q.Get("sendInitialEvents") == "true"
		resp, err := rt.RoundTrip(req)
		status := "error: "
		if err != nil {
			status += err.Error()
		} else {
			status = resp.Status
		}
		fmt.Fprintf(os.Stderr, "[informer %s] %s %s -> %s\n", r.name, req.Method, req.URL.RequestURI(), status)
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case req.Method != http.MethodGet:
		case watchlist:
			r.watchlistRequests++
			r.watchRequests++
			if err == nil && resp.StatusCode == http.StatusOK {
				r.watchlistOK++
			}
		case watch:
			r.watchRequests++
		default:
			r.listRequests++
		}
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

type event struct {
	Informer        string `json:"informer"`
	Type            string `json:"type"`
	Name            string `json:"name"`
	ResourceVersion string `json:"resourceVersion"`
	Initial         bool   `json:"initial,omitempty"`
}

func handler(o *out, informer string) cache.ResourceEventHandler {
	emit := func(typ string, obj any, initial bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			fmt.Fprintf(os.Stderr, "[informer %s] %s of a %T: %v\n", informer, typ, obj, err)
			return
		}
		o.line(event{informer, typ, m.GetName(), m.GetResourceVersion(), initial})
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { emit("add", obj, initial) },
		UpdateFunc: func(_, obj any) { emit("update", obj, false) },
		DeleteFunc: func(obj any) { emit("delete", obj, false) },
	}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "informer:", err)
		os.Exit(1)
	}
}

func run() error {
	// client-go reads KUBE_FEATURE_* once, on first use of a gate.
	if _, set := os.LookupEnv("KUBE_FEATURE_WatchListClient"); !set {
		_ = os.Setenv("KUBE_FEATURE_WatchListClient", "true")
	}
	klog.InitFlags(nil)
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (default: the usual loading rules)")
	namespace := flag.String("namespace", "", "namespace to watch (default: all)")
	resource := flag.String("resource", "postgreses", "resource of apps.cozystack.io/v1alpha1")
	timeout := flag.Duration("timeout", 5*time.Minute, "exit after this long")
	flag.Parse()

	if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		return fmt.Errorf("client-go feature gate WatchListClient is off (KUBE_FEATURE_WatchListClient=%s)",
			os.Getenv("KUBE_FEATURE_WatchListClient"))
	}

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: *resource}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		fmt.Fprintln(os.Stderr, "[informer] stdin closed, exiting")
		cancel()
	}()

	o := &out{enc: json.NewEncoder(os.Stdout)}
	watchErrors := func(name string) cache.WatchErrorHandlerWithContext {
		return func(ctx context.Context, r *cache.Reflector, err error) {
			o.line(map[string]string{"informer": name, "watchError": err.Error()})
			cache.DefaultWatchErrorHandler(ctx, r, err)
		}
	}

	dynRec := &recorder{name: "dynamic"}
	dynConfig := rest.CopyConfig(config)
	dynConfig.Wrap(dynRec.wrap)
	dynClient, err := dynamic.NewForConfig(dynConfig)
	if err != nil {
		return err
	}
	dynFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynClient, 0, *namespace, nil)
	dynInformer := dynFactory.ForResource(gvr).Informer()
	if err := dynInformer.SetWatchErrorHandlerWithContext(watchErrors("dynamic")); err != nil {
		return err
	}
	if _, err := dynInformer.AddEventHandler(handler(o, "dynamic")); err != nil {
		return err
	}

	metaRec := &recorder{name: "metadata"}
	metaConfig := rest.CopyConfig(config)
	metaConfig.Wrap(metaRec.wrap)
	metaClient, err := metadata.NewForConfig(metaConfig)
	if err != nil {
		return err
	}
	metaFactory := metadatainformer.NewFilteredSharedInformerFactory(metaClient, 0, *namespace, nil)
	metaInformer := metaFactory.ForResource(gvr).Informer()
	if err := metaInformer.SetWatchErrorHandlerWithContext(watchErrors("metadata")); err != nil {
		return err
	}
	if _, err := metaInformer.AddEventHandler(handler(o, "metadata")); err != nil {
		return err
	}

	dynFactory.Start(ctx.Done())
	metaFactory.Start(ctx.Done())
	defer dynFactory.Shutdown()
	defer metaFactory.Shutdown()

	if !cache.WaitForCacheSync(ctx.Done(), dynInformer.HasSynced, metaInformer.HasSynced) {
		o.line(map[string]bool{"synced": false})
		return fmt.Errorf("informers did not sync within %s", *timeout)
	}
	watchlist := true
	for _, r := range []*recorder{dynRec, metaRec} {
		s := r.summary()
		o.line(s)
		if s.WatchlistOK == 0 || s.ListRequests > 0 {
			watchlist = false
		}
	}
	o.line(map[string]bool{"watchlist": watchlist})
	o.line(map[string]bool{"synced": true})

	<-ctx.Done()
	if strings.Contains(fmt.Sprint(context.Cause(ctx)), "deadline") {
		fmt.Fprintf(os.Stderr, "[informer] --timeout %s reached, exiting\n", *timeout)
	}
	return nil
}
