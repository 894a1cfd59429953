// Command promrules evaluates Prometheus alerting rules over series as
// Prometheus does, for tests/it/install.rs: the rule file is loaded by
// Prometheus's own rules manager (so it is validated as Prometheus validates
// the files the Prometheus Operator writes from a PrometheusRule), the
// series are given in promqltest's `load` syntax, and the rules are
// evaluated every interval from 0 to end, printing one JSON line per step
// with the alerts firing then (name, labels, annotations as rendered).
//
// Usage: promrules RULE_FILE SERIES_FILE INTERVAL END (durations like 1m).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
)

// firing is one firing alert as printed.
type firing struct {
	Alert       string            `json:"alert"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// step is the line printed for one evaluation.
type step struct {
	AtSeconds int64    `json:"at"`
	Firing    []firing `json:"firing"`
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "promrules:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("usage: promrules RULE_FILE SERIES_FILE INTERVAL END")
	}
	series, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	interval, err := model.ParseDuration(args[2])
	if err != nil {
		return fmt.Errorf("interval: %w", err)
	}
	end, err := model.ParseDuration(args[3])
	if err != nil {
		return fmt.Errorf("end: %w", err)
	}
	p := parser.NewParser(parser.Options{})
	suite, err := promqltest.NewLazyLoader(string(series), promqltest.LazyLoaderOpts{
		EnableAtModifier: true, EnableNegativeOffset: true, Parser: p,
	})
	if err != nil {
		return fmt.Errorf("series: %w", err)
	}
	defer suite.Close()
	manager := rules.NewManager(&rules.ManagerOptions{
		QueryFunc:    rules.EngineQueryFunc(suite.QueryEngine(), suite.Storage()),
		AppendableV2: suite.Storage(),
		Context:      context.Background(),
		NotifyFunc:   func(context.Context, string, ...*rules.Alert) {},
		Logger:       promslog.NewNopLogger(),
		Parser:       p,
	})
	groups, errs := manager.LoadGroups(time.Duration(interval), labels.EmptyLabels(), "", nil, false, args[0])
	if len(errs) > 0 {
		return fmt.Errorf("rules: %v", errs)
	}
	names := make([]string, 0, len(groups))
	for name, g := range groups {
		names = append(names, name)
		for _, r := range g.Rules() {
			if a, ok := r.(*rules.AlertingRule); ok {
				// As after a restart that restored them: ALERTS is written.
				a.SetRestored(true)
			}
		}
	}
	sort.Strings(names)
	out := json.NewEncoder(os.Stdout)
	start := time.Unix(0, 0).UTC()
	for ts := start; !ts.After(start.Add(time.Duration(end))); ts = ts.Add(time.Duration(interval)) {
		var evalErr error
		suite.WithSamplesTill(ts, func(err error) {
			if err != nil {
				evalErr = err
				return
			}
			for _, name := range names {
				groups[name].Eval(suite.Context(), ts)
				for _, r := range groups[name].Rules() {
					if r.LastError() != nil && evalErr == nil {
						evalErr = fmt.Errorf("rule %s at %s: %w", r.Name(), ts.Sub(start), r.LastError())
					}
				}
			}
		})
		if evalErr != nil {
			return evalErr
		}
		line := step{AtSeconds: int64(ts.Sub(start) / time.Second), Firing: []firing{}}
		for _, name := range names {
			for _, r := range groups[name].Rules() {
				a, ok := r.(*rules.AlertingRule)
				if !ok {
					continue
				}
				for _, alert := range a.ActiveAlerts() {
					if alert.State == rules.StateFiring {
						line.Firing = append(line.Firing, firing{
							Alert: a.Name(), Labels: alert.Labels.Map(), Annotations: alert.Annotations.Map(),
						})
					}
				}
			}
		}
		if err := out.Encode(line); err != nil {
			return err
		}
	}
	return nil
}
