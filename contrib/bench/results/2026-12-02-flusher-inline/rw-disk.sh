#!/bin/bash
# rw-disk.sh ID [mount opts]: 4 KiB random writes on /var/tmp/prof/ID's
# volume (ab-setup.sh makes it), page cache dropped first; prints IOPS,
# daemon CPU us per write and the disk's reads (vda) per write.
# Env: RF (raidfuse binary), QD (16), REGION (1G), IOSZ (512M: a fixed
# number of writes), or RT (seconds: time-based instead, the bench's way).
RF=${RF:-/tmp/bm/raidfuse}; id=$1; shift
d=/var/tmp/prof/$id
$RF mount "$@" $(cat $d/members) $d/mnt || exit 1
pid=$(cat $d/mnt/.raidfuse/pid)
sync; echo 3 > /proc/sys/vm/drop_caches
if [ -n "$RT" ]; then amount="--time_based --runtime=$RT"; else amount="--io_size=${IOSZ:-512M}"; fi
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
r0=$(awk '$3=="vda"{print $4, $6}' /proc/diskstats)
out=$(fio --name=j --filename=$d/mnt/volume.img --rw=randwrite --bs=4k --iodepth=${QD:-16} --ioengine=libaio --direct=1 --size=${REGION:-1G} $amount --output-format=terse --terse-version=3)
r1=$(awk '$3=="vda"{print $4, $6}' /proc/diskstats)
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
$RF umount $d/mnt
iops=$(echo "$out" | awk -F';' '{print $49}')
n=$(echo "$out" | awk -F';' '{print int($47 / 4)}')   # KiB written / 4
set -- $r0 $r1
echo "$id IOPS=$iops cpu_us/write=$(( (t1-t0)*10000 / n )) disk_reads/write=$(echo "scale=2; ($3-$1)/$n" | bc) disk_KiB/write=$(echo "scale=1; ($4-$2)/2/$n" | bc)"
