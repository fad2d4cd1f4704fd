// Interop with the Kubernetes extension (ms-kubernetes-tools.vscode-kubernetes-tools): when it is
// installed, the kubeconfig it uses is what the user sees in its cluster explorer, so it is the
// default here too (our own settings win when set). Its context switch rewrites that kubeconfig's
// current-context, which the server then follows.
import type * as vscode from 'vscode';
import { extension } from 'vscode-kubernetes-tools-api';

export async function kubernetesToolsSelection(): Promise<{ kubeconfig?: string } | undefined> {
  try {
    const configuration = await extension.configuration.v1_1;
    if (!configuration.available) return undefined;
    const path = configuration.api.getKubeconfigPath();
    return path.pathType === 'host' ? { kubeconfig: path.hostPath } : undefined;
  } catch {
    return undefined;
  }
}

/** Calls `onChange` when the Kubernetes extension switches kubeconfig or context. */
export async function watchKubernetesTools(onChange: () => void): Promise<vscode.Disposable[]> {
  try {
    const configuration = await extension.configuration.v1_1;
    if (!configuration.available) return [];
    return [configuration.api.onDidChangeKubeconfigPath(onChange), configuration.api.onDidChangeContext(onChange)];
  } catch {
    return [];
  }
}
