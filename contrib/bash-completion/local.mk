# Bash completion for clockctl, installed where bash-completion looks
# (pkg-config bash-completion, or --with-bashcompletiondir).
bashcompletion_DATA = contrib/bash-completion/clockctl
EXTRA_DIST += contrib/bash-completion/clockctl
