;;; emacs.el --- drives Emacs with eglot as a user would  -*- lexical-binding: t -*-

;; Loaded by emacs.test.ts after the init.el it extracted from docs/editors.md: open a manifest,
;; M-x eglot, wait for the conflict in Flymake, M-x eldoc on the field, the documented ownership
;; command, pick the quick fix from M-x eglot-code-actions, save, and wait for the conflict to go away. Every wait is on an observed
;; state. Batch Emacs is never idle, so the edit eglot would send after a moment's idleness goes
;; when the user saves (eglot sends pending edits before didSave). The outcome is written as JSON to
;; $KCH_RESULT; emacs.test.ts judges it.

(require 'cl-lib)
(require 'json)
(defvar eglot--versioned-identifier) ; the buffer's document version; eglot loads on M-x eglot

(defvar kch-result (list (cons 'steps [])))
(defvar kch-timeout (/ (string-to-number (or (getenv "KCH_WAIT_MS") "60000")) 1000.0))

(defun kch-set (key value) (setf (alist-get key kch-result) value))
(defun kch-step (name) (kch-set 'steps (vconcat (alist-get 'steps kch-result) (list name))))

(defun kch-finish (err)
  (when err (kch-set 'error (error-message-string err)))
  (let ((coding-system-for-write 'utf-8))
    (with-temp-file (getenv "KCH_RESULT") (insert (json-encode kch-result))))
  (kill-emacs 0))

(defun kch-wait (what predicate &optional seen)
  "Wait for PREDICATE, letting processes and timers run.
On time out, fail naming WHAT and what SEEN returns."
  (let ((deadline (+ (float-time) kch-timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or (funcall predicate)
        (error "Timed out waiting for %s%s" what (if seen (format "; seen: %S" (funcall seen)) "")))))

(defun kch-lsp-diagnostic (diagnostic)
  "The LSP diagnostic eglot made DIAGNOSTIC (a Flymake diagnostic) from."
  (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data diagnostic))))

(defun kch-conflicts ()
  (cl-remove-if-not
   (lambda (d)
     (let ((lsp (kch-lsp-diagnostic d)))
       (and (equal (plist-get lsp :source) "kube-conflict-hints")
            (equal (plist-get lsp :code) "field-conflict"))))
   (flymake-diagnostics)))

;; The document version of the latest published diagnostics: the proof that an empty list is the
;; server's answer to the edited text, not the old answer not yet replaced.
(defvar kch-published-version -1)
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (when (and (eq method 'textDocument/publishDiagnostics) (plist-get params :version))
                (setq kch-published-version (plist-get params :version)))))

(defun kch-run ()
  (find-file (getenv "KCH_MANIFEST"))
  (kch-set 'mode (symbol-name major-mode))
  (kch-step "opened")

  ;; M-x eglot: the server comes from the eglot-server-programs entry of init.el.
  (call-interactively #'eglot)
  (kch-wait "eglot to manage the buffer" (lambda () (bound-and-true-p eglot--managed-mode)))
  (kch-set 'command (vconcat (process-command (jsonrpc--process (eglot-current-server)))))
  (kch-step "started")

  (kch-wait "the field-conflict diagnostic in Flymake" #'kch-conflicts
            (lambda () (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))
  (let* ((diagnostic (car (kch-conflicts)))
         (beg (flymake-diagnostic-beg diagnostic)))
    (kch-set 'diagnostic
             `((line . ,(1- (line-number-at-pos beg)))
               (text . ,(flymake-diagnostic-text diagnostic))
               (message . ,(plist-get (kch-lsp-diagnostic diagnostic) :message))))
    (kch-step "diagnosed")

    ;; M-x eldoc on the contested key: what eldoc shows comes through its display functions.
    (goto-char beg)
    (let ((shown nil))
      (add-hook 'eldoc-display-functions
                (lambda (docs _interactive) (when docs (setq shown (mapconcat #'car docs "\n")))))
      (call-interactively #'eldoc)
      (kch-wait "the hover" (lambda () shown))
      (kch-set 'hover (substring-no-properties shown)))
    (kch-step "hovered")

    ;; M-x kube-conflict-hints-ownership, the command docs/editors.md adds to init.el.
    (goto-char beg)
    (call-interactively 'kube-conflict-hints-ownership)
    (kch-set 'ownership (with-current-buffer "*kube-conflict-hints ownership*"
                          (buffer-substring-no-properties (point-min) (point-max))))
    (kch-step "ownership")

    ;; M-x eglot-code-actions from the keyboard: answer its menu with the fix a user would pick.
    (goto-char beg)
    (let ((offered nil) (picked nil) (last-nonmenu-event ?\r))
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (_prompt collection &rest _)
                   (setq offered (mapcar #'car collection))
                   (setq picked (cl-find-if (lambda (title) (string-prefix-p "Remove .spec.replicas" title)) offered))
                   (or picked (error "The quick fix was not offered: %S" offered)))))
        (call-interactively #'eglot-code-actions))
      (kch-set 'offered (vconcat offered)))
    (kch-step "fixed"))

  ;; C-x C-s: eglot sends the pending edit, then didSave.
  (save-buffer)
  (let ((edited eglot--versioned-identifier))
    (kch-set 'editedVersion edited)
    (kch-wait "the conflict to clear after the fix"
              (lambda () (and (>= kch-published-version edited) (null (kch-conflicts))))
              (lambda () (list :published kch-published-version :edited edited
                               :conflicts (mapcar #'flymake-diagnostic-text (kch-conflicts))))))
  (kch-set 'text (buffer-substring-no-properties (point-min) (point-max)))
  (kch-set 'remaining (vconcat (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))
  (kch-step "cleared"))

(condition-case err
    (progn (kch-run) (kch-finish nil))
  (error (kch-finish err)))

;;; emacs.el ends here
