# Source this to use the project's environment: the venv, the built interfaces, and ROS 2
# discovery kept on this machine (Jazzy+ and Humble variables both).
_SM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$_SM_ROOT/.venv/bin/activate"
if [ -f "$_SM_ROOT/install/setup.bash" ]; then
  # colcon's setup scripts read unset variables: source them with nounset off, then give the caller back
  # its own setting (turning nounset on in a user's shell breaks the next setup.bash they source)
  case $- in *u*) _SM_NOUNSET=1 ;; *) _SM_NOUNSET= ;; esac
  set +u; . "$_SM_ROOT/install/setup.bash"
  if [ -n "$_SM_NOUNSET" ]; then set -u; fi
  unset _SM_NOUNSET
fi
# The wheels' shared libraries and the interfaces' typesupport libraries
export LD_LIBRARY_PATH="$_SM_ROOT/install/spatial_manip_interfaces/lib:$_SM_ROOT/.venv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
export ROS_LOCALHOST_ONLY=${ROS_LOCALHOST_ONLY:-1}
