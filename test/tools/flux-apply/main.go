// flux-apply applies a YAML stream to a cluster exactly as Flux's kustomize-controller applies the
// objects of a Kustomization: with the server-side apply resource manager of github.com/fluxcd/pkg/ssa
// (the version kustomize-controller v1.9.6 pins, see go.mod) and the ApplyOptions that
// kustomize-controller's internal/controller/kustomization_controller.go (func apply) builds: field
// manager `kustomize-controller`, forced ownership, the cleanup of kubectl's and before-first-apply's
// managedFields entries and of kubectl's last-applied annotation, and the per-object
// `kustomize.toolkit.fluxcd.io/ssa` and `/force` annotations. It is the controller's own code, run by
// the tests only, against the tests' cluster: it writes (no dry run). It prints the change set as
// JSON on stdout.
//
// Usage: flux-apply --kubeconfig FILE [--name NAME --namespace NS] [--force] [--ignore /a,/b] < stream.yaml
//
// With --helm-drift enabled|warn it runs helm-controller's drift correction instead (helm_drift.go),
// for the Helm release --name in --namespace.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kustomize-controller's main.go: const controllerName = "kustomize-controller"; its API group.
const (
	controllerName = "kustomize-controller"
	group          = "kustomize.toolkit.fluxcd.io"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster to apply to")
	name := flag.String("name", "apps", "the Kustomization's name (the owner labels)")
	namespace := flag.String("namespace", "flux-system", "the Kustomization's namespace (the owner labels)")
	force := flag.Bool("force", false, "the Kustomization's spec.force")
	ignore := flag.String("ignore", "", "the Kustomization's spec.ignore paths (JSON pointers, comma-separated), for every object")
	helmDrift := flag.String("helm-drift", "", "run helm-controller's drift correction for release --name in --namespace: enabled or warn")
	flag.Parse()
	if *helmDrift != "" {
		if err := runHelmDrift(*kubeconfig, *name, *namespace, *helmDrift); err != nil {
			fmt.Fprintf(os.Stderr, "flux-apply: %v\n", err)
			os.Exit(1)
		}
		return
	}
	var ignorePaths []string
	if *ignore != "" {
		ignorePaths = strings.Split(*ignore, ",")
	}
	if err := run(*kubeconfig, *name, *namespace, *force, ignorePaths); err != nil {
		fmt.Fprintf(os.Stderr, "flux-apply: %v\n", err)
		os.Exit(1)
	}
}

func run(kubeconfig, name, namespace string, force bool, ignorePaths []string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	kubeClient, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	objects, err := ssautil.ReadObjects(os.Stdin)
	if err != nil {
		return err
	}

	// kustomization_controller.go reconcile: the manager, its owner, the owner labels.
	resourceManager := ssa.NewResourceManager(kubeClient, nil, ssa.Owner{Field: controllerName, Group: group})
	resourceManager.SetOwnerLabels(objects, name, namespace)

	// kustomization_controller.go apply.
	if err := normalize.UnstructuredList(objects); err != nil {
		return err
	}
	applyOpts := ssa.DefaultApplyOptions()
	applyOpts.Force = force
	applyOpts.ExclusionSelector = map[string]string{
		group + "/reconcile": "disabled",
		group + "/ssa":       "Ignore",
	}
	applyOpts.IfNotPresentSelector = map[string]string{group + "/ssa": "IfNotPresent"}
	applyOpts.ForceSelector = map[string]string{group + "/force": "enabled"}
	// spec.ignore: one rule without a target selector applies to every object.
	if len(ignorePaths) > 0 {
		applyOpts.DriftIgnoreRules = []jsondiff.IgnoreRule{{Paths: ignorePaths}}
	}
	fieldManagers := []ssa.FieldManager{
		{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
		{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
		{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
		{Name: controllerName, OperationType: metav1.ManagedFieldsOperationUpdate},
	}
	applyOpts.Cleanup = ssa.ApplyCleanupOptions{
		Annotations: []string{
			corev1.LastAppliedConfigAnnotation,
			"kustomize.toolkit.fluxcd.io/checksum",
			"fluxcd.io/sync-checksum",
		},
		Labels:        []string{"fluxcd.io/sync-gc-mark"},
		FieldManagers: fieldManagers,
		Exclusions:    map[string]string{group + "/ssa": "Merge"},
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	changeSet, err := resourceManager.ApplyAllStaged(ctx, objects, applyOpts)
	out := struct {
		Changes []map[string]string `json:"changes"`
		Error   string              `json:"error,omitempty"`
	}{Changes: []map[string]string{}}
	if changeSet != nil {
		for _, e := range changeSet.Entries {
			out.Changes = append(out.Changes, map[string]string{"subject": e.Subject, "action": e.Action.String()})
		}
	}
	if err != nil {
		out.Error = err.Error()
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
