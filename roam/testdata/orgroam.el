;;; orgroam.el --- index a directory with org-roam and print what it sees  -*- lexical-binding: t -*-

;; Run by roam's Go tests as
;;   emacs --batch -Q -l testdata/orgroam.el
;; with ROAM_DIR (the org-roam directory), ROAM_DB (a scratch database file),
;; ROAM_IDS (node IDs to look up, blank-separated), ROAM_BACKLINKS (IDs
;; whose backlinks to print) and optionally ROAM_CONNECTORS (the database
;; connectors to try, in order). Output on stdout, one tab-separated record a line:
;;   connector <name>
;;   node      <id> <title> <tag,tag,...>
;;   missing   <id>
;;   backlink  <target id> <source id>
;; Exit codes: 3 org-roam cannot be loaded, 4 no database connector works.

(require 'package)
(setq package-user-dir (make-temp-file "orgroam-elpa" t))
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)

;; Debian keeps the sources in elpa-src; use them directly if package.el did not.
(unless (locate-library "org-roam")
  (dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa-src/*"))
    (when (file-directory-p dir) (add-to-list 'load-path dir))))

(setq org-roam-v2-ack t
      org-id-locations-file (make-temp-file "orgroam-id-locations")
      org-roam-db-update-on-save nil)

(unless (require 'org-roam nil t)
  (message "org-roam cannot be loaded; load-path: %S" load-path)
  (kill-emacs 3))

(setq org-roam-directory (file-truename (getenv "ROAM_DIR"))
      org-roam-db-location (getenv "ROAM_DB"))

(defun orgroam-test-try (connector)
  "Index `org-roam-directory' with CONNECTOR; return non-nil when it worked."
  (ignore-errors (org-roam-db--close-all))
  (when (file-exists-p org-roam-db-location)
    (delete-file org-roam-db-location))
  (setq org-roam-database-connector connector)
  (condition-case err
      (progn (org-roam-db-sync 'force) t)
    (error (message "connector %s: %S" connector err) nil)))

;; sqlite3 (emacsql-sqlite3) needs the sqlite3 program; sqlite needs the
;; compiled emacsql-sqlite binary; sqlite-builtin needs Emacs 29.
;; ROAM_CONNECTORS (blank-separated names) overrides the order.
(let ((candidates (if (getenv "ROAM_CONNECTORS")
                      (mapcar #'intern (split-string (getenv "ROAM_CONNECTORS")))
                    (append (and (executable-find "sqlite3") '(sqlite3))
                            '(sqlite sqlite-builtin sqlite-module)))))
  (unless (seq-find #'orgroam-test-try candidates)
    (message "no org-roam database connector works (tried %S)" candidates)
    (kill-emacs 4))
  (princ (format "connector\t%s\n" org-roam-database-connector)))

(dolist (id (split-string (or (getenv "ROAM_IDS") "")))
  (let ((node (org-roam-node-from-id id)))
    (princ (if node
               (format "node\t%s\t%s\t%s\n" id (org-roam-node-title node)
                       (string-join (org-roam-node-tags node) ","))
             (format "missing\t%s\n" id)))))

(dolist (id (split-string (or (getenv "ROAM_BACKLINKS") "")))
  (let ((node (org-roam-node-from-id id)))
    (when node
      (dolist (bl (org-roam-backlinks-get node))
        (princ (format "backlink\t%s\t%s\n" id
                       (org-roam-node-id (org-roam-backlink-source-node bl))))))))

(ignore-errors (org-roam-db--close-all))
(kill-emacs 0)
